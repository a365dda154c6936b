// The Hono app: middleware, routes, and the ONE place errors are rendered. Handlers validate
// (zod, through the route definitions) → call a service → c.json.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { every } from 'hono/combine';
import type { ZodError } from 'zod';
import { toAdmission } from '../schema/admission.ts';
import type { FieldIssue } from '../schema/api.ts';
import type { KeyRing } from './auth/keys.ts';
import type { Config, Env } from './config.ts';
import { mountDashboard } from './dashboard.ts';
import { envelope, inferenceUnavailable, notFound, toApiError, validationFailed } from './errors.ts';
import { forward, type Fetch, type InferenceOperation } from './inference/forward.ts';
import { bearerTenant } from './middleware/auth.ts';
import { forwardedJsonBody, jsonBody } from './middleware/json-body.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { addressKey, RATE_LIMITS, type RateLimiters } from './rate-limit.ts';
import { accessLog, jsonLogger, type Logger } from './middleware/log.ts';
import { requestId } from './middleware/request-id.ts';
import { routes } from './routes.ts';
import { admit } from './services/admit.ts';
import type { ServiceDeps } from './services/deps.ts';
import { listModels, requireReadyModel } from './services/models.ts';
import { getQuota } from './services/quota.ts';
import { getQueue } from './services/queue.ts';
import { scaleAdmission } from './services/scale.ts';
import { deleteAdmission, getAdmission, listAdmissions } from './services/requests.ts';
import { publicBase, shown } from './tenant-url.ts';
import { callWhenAllowed } from './inference/when-allowed.ts';

export interface AppOptions {
  config: Config;
  /** Services for one request (a database client is only configuration: cheap to make). */
  deps: (env: Env) => ServiceDeps;
  keyRing: (env: Env) => Promise<KeyRing>;
  /** The rate limiters of an environment (its bindings, a fake in unit tests); undefined only with RATE_LIMITS = "off". */
  rateLimiters: (env: Env) => RateLimiters | undefined;
  /** The fetch the in-cluster gateway is called with (a fake gateway in unit tests); default: the runtime's. */
  gatewayFetch?: Fetch;
  log?: Logger;
}

export type AppEnv = { Bindings: Env; Variables: { requestId: string; tenant: string; keyId?: string; admissionId?: string } };

const TARGET_PREFIX: Record<string, string> = { json: '', header: 'header.', query: 'query.', param: 'path.' };

export function fieldIssues(error: ZodError, target: string): FieldIssue[] {
  const prefix = TARGET_PREFIX[target] ?? `${target}.`;
  const path = (p: PropertyKey[]) => prefix + p.map((s) => (typeof s === 'number' ? `[${s}]` : String(s))).join('.').replace(/\.\[/g, '[');
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ path: path([...i.path, k]), message: 'unknown field' }))
      : [{ path: path(i.path), message: i.message }],
  );
}

export function createApp(opts: AppOptions): OpenAPIHono<AppEnv> {
  const log = opts.log ?? jsonLogger;
  const gatewayFetch: Fetch = opts.gatewayFetch ?? ((url, init) => fetch(url, init));
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationFailed(fieldIssues(result.error, result.target));
    },
  });
  // Every request counts against its client address before anything else is done for it (the
  // key check included); an authenticated one also against its tenant.
  const ipRateLimit = rateLimit<AppEnv>({
    scope: 'ip',
    limiter: (env) => opts.rateLimiters(env)?.ip,
    key: (c) => addressKey(c.req.header('CF-Connecting-IP')),
    periodSeconds: RATE_LIMITS.ip.periodSeconds,
  });
  const tenantRateLimit = rateLimit<AppEnv>({
    scope: 'tenant',
    limiter: (env) => opts.rateLimiters(env)?.tenant,
    key: (c) => c.var.tenant,
    periodSeconds: RATE_LIMITS.tenant.periodSeconds,
  });
  const auth = bearerTenant({ keyRing: opts.keyRing, log });
  const authenticated = every(auth, tenantRateLimit);
  const optionalAuth: MiddlewareHandler<AppEnv> = async function optionalAuthMiddleware(c, next) {
    if (c.req.header('Authorization') === undefined) return next();
    return authenticated(c, next);
  };
  const r = routes({
    maxReplicas: opts.config.maxReplicas,
    auth,
    tenantRateLimit,
    optionalAuth,
    jsonBody: jsonBody({ maxBytes: opts.config.maxBodyBytes }),
    forwardedJsonBody: forwardedJsonBody({ maxBytes: opts.config.maxBodyBytes }),
  });
  /** The base of the URLs in this request's answer (an admission's endpoint). */
  const base = (c: Context<AppEnv>) => publicBase(opts.config.publicUrl, c.req.url);

  app.use(requestId());
  app.use(accessLog({ log }));
  app.use(ipRateLimit);

  app.openapi(r.submit, async (c) => {
    const decision = toAdmission(c.req.valid('json'), opts.config.policy);
    if (!decision.ok) throw validationFailed(decision.issues);
    const parsed = decision.admission;
    const key = c.req.valid('header')['idempotency-key'];
    const result = await admit(opts.deps(c.env), { tenant: c.var.tenant, idempotencyKey: key, requestId: c.var.requestId, parsed });
    c.set('admissionId', result.admission.id);
    const admission = shown(result.admission, base(c));
    if (result.outcome === 'created') return c.json(admission, 201);
    return result.outcome === 'queued' ? c.json(admission, 202) : c.json(admission, 200);
  });
  app.openapi(r.queue, async (c) => c.json(await getQueue(opts.deps(c.env), c.var.tenant), 200));
  app.openapi(r.list, async (c) => {
    const page = await listAdmissions(opts.deps(c.env), c.var.tenant, c.req.valid('query'));
    return c.json({ items: page.items.map((a) => shown(a, base(c))), nextCursor: page.nextCursor }, 200);
  });
  app.openapi(r.get, async (c) => {
    const { id } = c.req.valid('param');
    c.set('admissionId', id);
    return c.json(shown(await getAdmission(opts.deps(c.env), c.var.tenant, id), base(c)), 200);
  });
  app.openapi(r.scale, async (c) => {
    const { id } = c.req.valid('param');
    c.set('admissionId', id);
    const { replicas, autoscale } = c.req.valid('json');
    const idempotencyKey = c.req.valid('header')['idempotency-key'];
    const result = await scaleAdmission(opts.deps(c.env), { tenant: c.var.tenant, id, idempotencyKey, requestId: c.var.requestId, replicas, autoscale });
    const admission = shown(result.admission, base(c));
    return result.outcome === 'accepted' ? c.json(admission, 202) : c.json(admission, 200);
  });
  app.openapi(r.remove, async (c) => {
    const { id } = c.req.valid('param');
    c.set('admissionId', id);
    return c.json(shown(await deleteAdmission(opts.deps(c.env), c.var.tenant, id, c.var.requestId), base(c)), 202);
  });
  // Without a gateway no model can be called: listing them would only point at 503s.
  app.openapi(r.models, async (c) => {
    if (!opts.config.gateway) throw inferenceUnavailable();
    return c.json(await listModels(opts.deps(c.env), c.var.tenant), 200);
  });
  // Inference: the admission must be the caller's and ready (read every time); the request goes to
  // the gateway with a credential in place of the key while that is read, and the answer streams
  // back only once it said yes (inference/when-allowed.ts).
  const infer = async (c: Context<AppEnv>, operation: InferenceOperation, id: string): Promise<Response> => {
    c.set('admissionId', id);
    const gateway = opts.config.gateway;
    if (!gateway) throw inferenceUnavailable();
    const deps = opts.deps(c.env);
    const call = {
      tenant: c.var.tenant,
      admission: id,
      requestId: c.var.requestId,
      operation,
      body: await c.req.arrayBuffer(),
      contentType: c.req.header('Content-Type') ?? 'application/json',
      accept: c.req.header('Accept'),
    };
    return callWhenAllowed(
      () => requireReadyModel(deps, c.var.tenant, id),
      (signal) => forward({ fetch: gatewayFetch, gateway, now: deps.clock, log }, { ...call, signal }),
      c.req.raw.signal,
    );
  };
  app.openapi(r.chatCompletions, (c) => infer(c, 'chat/completions', c.req.valid('param').id));
  app.openapi(r.completions, (c) => infer(c, 'completions', c.req.valid('param').id));
  app.openapi(r.quota, async (c) => c.json(await getQuota(opts.deps(c.env), c.var.tenant), 200));
  // Anonymous: liveness only, no database round trip. Authenticated by optionalAuth (a key was sent): the deep check.
  app.openapi(r.health, async (c) => {
    if (c.var.keyId === undefined) return c.json({ ok: true }, 200);
    await opts.deps(c.env).db.execute('SELECT 1');
    return c.json({ ok: true, database: 'up' as const }, 200);
  });

  mountDashboard(app);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'Tenant API key.' });
  app.doc('/openapi.json', {
    openapi: '3.0.3',
    info: { title: 'ModelDock admission API', version: '1.0.0', description: 'Run a model image on ModelDock, charged against the tenant quota.' },
  });

  app.notFound((c) => c.json(envelope(notFound('route')), 404));
  app.onError((err, c) => {
    const api = toApiError(err);
    if (api.status >= 500) {
      log({
        level: 'error',
        msg: 'request failed',
        reqId: c.var.requestId,
        ...(c.var.tenant ? { tenant: c.var.tenant } : {}),
        ...(c.var.admissionId ? { admissionId: c.var.admissionId } : {}),
        code: api.code,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      });
    }
    for (const [k, v] of Object.entries(api.headers)) c.header(k, v);
    // Hono's status type lists the registered codes only; 499 (client_closed) is nginx's and valid on a Response.
    return c.json(envelope(api), api.status as ContentfulStatusCode);
  });
  return app;
}
