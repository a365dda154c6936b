// The Cloudflare Worker: `fetch` serves the admission API and the tenants' calls to their models
// (forwarded to the in-cluster gateway), `scheduled` (cron trigger in
// wrangler.toml) enqueues safety-net reconcile rows. Configuration is validated per isolate;
// a bad configuration answers every request with the fixed 500 `misconfigured` and logs why once.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ExecutionContext } from 'hono';
import { createApp, type AppEnv } from './app.ts';
import { keyRingFor } from './auth/keys.ts';
import { parseConfig, type Config, type Env } from './config.ts';
import { createDb } from '../ledger/db.ts';
import { allowsAnyRegistry } from '../schema/policy.ts';
import { envelope, misconfigured } from './errors.ts';
import { jsonLogger, logOnce } from './middleware/log.ts';
import { ulidGenerator, type ServiceDeps } from './services/deps.ts';
import { sweep } from './services/sweep.ts';
import { rateLimitersOf } from './rate-limit.ts';
import { createPlacer, type Placer } from '../ledger/placement.ts';

/** The parts of the Workers runtime types we use (no @cloudflare/workers-types needed). */
export interface ScheduledController {
  readonly cron: string;
  readonly scheduledTime: number;
}
export type { ExecutionContext } from 'hono';

const newId = ulidGenerator();
/**
 * The services' deps for one request: every round trip has the DB_TIMEOUT_MS deadline, and so
 * has the request's database work as a whole (the signal starts now), so a hung database
 * answers 503 database_unavailable within DB_TIMEOUT_MS — a transaction's ROLLBACK included.
 */
const depsFor = (config: Config, placer: Placer): ServiceDeps => ({
  db: createDb({ url: config.databaseUrl, timeoutMs: config.dbTimeoutMs }).withSignal(AbortSignal.timeout(config.dbTimeoutMs)),
  clock: () => new Date(),
  newId,
  placer,
});
/** The cron run spends many statements: each round trip has the deadline, the run has its lease. */
const sweepDeps = (config: Config, placer: Placer): ServiceDeps => ({ db: createDb({ url: config.databaseUrl, timeoutMs: config.dbTimeoutMs }), clock: () => new Date(), newId, placer });

let cached: { env: Env; config: Config; app: OpenAPIHono<AppEnv>; placer: Placer } | undefined;

function appFor(env: Env): { config: Config; app: OpenAPIHono<AppEnv>; placer: Placer } {
  if (cached?.env !== env) {
    const config = parseConfig(env);
    if (allowsAnyRegistry(config.policy.allowedRegistries)) {
      jsonLogger({ level: 'warn', msg: 'ALLOWED_IMAGE_REGISTRIES is *: images from ANY registry are admitted' });
    }
    // The rate-limiting bindings are required (a missing one refuses every request) unless RATE_LIMITS = "off";
    // checked once per environment, like the rest of the configuration (the app is cached with it).
    const limiters = rateLimitersOf(env, config.rateLimits);
    if (!config.rateLimits) jsonLogger({ level: 'warn', msg: 'RATE_LIMITS is "off": no request is rate limited' });
    if (!config.gateway) jsonLogger({ level: 'info', msg: 'GATEWAY_URL and GATEWAY_CREDENTIAL_KEY unset: calling models is off (the /v1/models routes answer 503 inference_unavailable)' });
    // One placer per isolate: its short-lived caches (shards, rooms) serve every request.
    const placer = createPlacer({ policy: config.placementPolicy });
    const app = createApp({ config, deps: () => depsFor(config, placer), keyRing: (e) => keyRingFor(e.ADMISSION_KEYS_JSON, { digestsOnly: config.production }), rateLimiters: () => limiters });
    cached = { env, config, app, placer };
  }
  return cached;
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    let app;
    try {
      app = appFor(env).app;
    } catch (err) {
      const detail = (err as Error).message;
      logOnce(jsonLogger, detail, { level: 'error', msg: 'invalid Worker configuration: every request is refused', error: detail });
      return Response.json(envelope(misconfigured()), { status: 500 });
    }
    return app.fetch(request, env, ctx);
  },

  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    const { config, placer } = appFor(env);
    const run = sweep(sweepDeps(config, placer), {
      cron: controller.cron,
      scheduledTime: controller.scheduledTime,
      staleAfterMs: config.reconcileStaleAfterMs,
      pageSize: config.reconcilePageSize,
      maxStatements: config.reconcileMaxStatements,
      retentionMs: config.outboxRetentionMs,
      holder: crypto.randomUUID(),
    });
    ctx.waitUntil(run);
    const result = await run;
    jsonLogger({ level: 'info', msg: 'scheduled sweep', cron: controller.cron, scheduledTime: controller.scheduledTime, ...result });
  },
};
