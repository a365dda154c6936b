// Route definitions (OpenAPI + validation) built from the schema/ zod schemas. Each route
// carries its own authentication: a secured route lists the bearer middleware where it is
// defined (and says so in OpenAPI), followed by the tenant's rate limit; a route without it must
// be on PUBLIC_ROUTES (app.test.ts enumerates every route of the app and fails otherwise).
import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { DASHBOARD_PATHS } from './dashboard.ts';
import { MODEL_LIST_LIMIT } from './db/models.ts';
import { admissionRequestSchema, idempotencyKey } from '../schema/admission.ts';
import { scaleRequestSchema } from '../schema/scale.ts';
import { admissionListSchema, admissionSchema, errorEnvelopeSchema, healthSchema, listQuerySchema, modelListSchema, queueViewSchema, quotaSchema } from '../schema/api.ts';

const json = <T extends z.ZodType>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const err = (description: string) => json(errorEnvelopeSchema, description);

/** Routes served without authentication: `METHOD path` as Hono registers them. */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  'GET /healthz',
  'GET /openapi.json',
  // The dashboard page and its assets hold no data; the page calls the API with the tenant's key.
  ...DASHBOARD_PATHS.map((p) => `GET ${p}`),
]);

export interface RouteOptions {
  maxReplicas: number;
  /** Authenticates the tenant (sets c.var.tenant); every secured route runs it first. */
  auth: MiddlewareHandler;
  /** The tenant's rate limit, right after authentication. */
  tenantRateLimit: MiddlewareHandler;
  /** /healthz: authenticates (and rate-limits) only a caller that sends a key; anonymous stays anonymous. */
  optionalAuth: MiddlewareHandler;
  /** Body guards of JSON endpoints (size, Content-Type), after authentication. */
  jsonBody: MiddlewareHandler[];
  /** Body guards of a JSON body forwarded byte for byte (inference): size, Content-Type, the bytes read first. */
  forwardedJsonBody: MiddlewareHandler[];
}

const idParam = z.object({
  id: z
    .string()
    .regex(/^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$/, 'must be an admission id (ULID)')
    .transform((s) => s.toUpperCase())
    .openapi({ param: { name: 'id', in: 'path' }, example: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K' }),
});

/** An OpenAI request body: the Worker checks only that it is a JSON object. */
const inferenceBody = z
  .looseObject({})
  .describe('An OpenAI request body (messages or prompt, stream, max_tokens, …), forwarded to the model byte for byte. `model` may be left out: the URL names the model.');

const tooMany = err('Too many requests from this address or for this tenant (Retry-After: seconds).');
const common = {
  401: err('Missing or invalid API key.'),
  429: tooMany,
  503: err('The database is unavailable.'),
};

export function routes({ maxReplicas, auth, tenantRateLimit, optionalAuth, jsonBody, forwardedJsonBody }: RouteOptions) {
  const secured = { security: [{ bearer: [] }], middleware: [auth, tenantRateLimit] };
  const inferenceRoute = <P extends 'chat/completions' | 'completions'>(operation: P, summary: string) =>
    createRoute({
      method: 'post',
      path: `/v1/models/{id}/${operation}` as `/v1/models/{id}/${P}`,
      summary,
      description:
        'Forwarded to the model through the in-cluster gateway with the same API key as the rest of the API (it never reaches the model). ' +
        "The model's answer — its status, its JSON or its server-sent events — is streamed back as it comes.",
      security: secured.security,
      middleware: [...secured.middleware, ...forwardedJsonBody],
      request: { params: idParam, body: { required: true, content: { 'application/json': { schema: inferenceBody } } } },
      responses: {
        200: {
          description: "The model's answer: JSON, or with \"stream\": true server-sent events (text/event-stream). Any other status of the model's (400, 404, 429, …) is passed on as it is.",
          content: { 'application/json': { schema: z.unknown() }, 'text/event-stream': { schema: z.string() } },
        },
        400: err('The body is not a JSON object, or an invalid id.'),
        404: err('No such admission for this tenant.'),
        409: err('model_not_ready: the admission is not ready (details.state).'),
        413: err('Body too large.'),
        415: err('Not JSON.'),
        499: err('client_closed: the client left before the model answered (logged; nobody reads it).'),
        502: err('gateway_error: the model gateway could not be reached or refused the request.'),
        503: err('model_unavailable (Retry-After): no replica can take the request now; inference_unavailable: calling models is not enabled; database_unavailable.'),
        504: err('gateway_timeout: the model did not start answering within the deadline.'),
        401: common[401],
        429: common[429],
      },
    });
  return {
    submit: createRoute({
      method: 'post',
      path: '/requests',
      summary: 'Submit a model service (admission)',
      description:
        'Charges the tenant quota for every resource at once (all-or-nothing) and records the admission. ' +
        'A retry with the same Idempotency-Key and body returns the same admission (200); a different body is 422. ' +
        'With "onShortQuota": "queue" a request the quota cannot take now is queued instead of refused (202, nothing charged): ' +
        'it is admitted the moment enough quota frees up, in FIFO order behind the tenant\'s earlier queued admissions. ' +
        'While a tenant has queued admissions nothing passes them: a refusing request is 409 even where it would fit.',
      security: secured.security,
      middleware: [...secured.middleware, ...jsonBody],
      request: {
        headers: z.object({ 'idempotency-key': idempotencyKey.describe('Client-chosen key; a retry with the same key and body returns the same admission.') }),
        body: { required: true, content: { 'application/json': { schema: admissionRequestSchema(maxReplicas) } } },
      },
      responses: {
        201: json(admissionSchema, 'Admitted.'),
        202: json(admissionSchema, 'Queued for quota (onShortQuota "queue"): see queue.position and queue.estimate.'),
        200: json(admissionSchema, 'The admission made earlier with this Idempotency-Key (as it is now).'),
        400: err('Invalid request (field paths in details.issues) or malformed JSON.'),
        409: err(
          'Quota exceeded (details.shortfalls names each short resource and by how much; details.queued how many admissions wait ahead). With "queue", only for a request beyond the tenant\'s hard limits.',
        ),
        413: err('Body too large.'),
        415: err('Not JSON.'),
        422: err('Idempotency-Key reused with a different body.'),
        ...common,
      },
    }),
    list: createRoute({
      method: 'get',
      path: '/requests',
      summary: 'List admissions, newest first',
      ...secured,
      request: { query: listQuerySchema },
      responses: { 200: json(admissionListSchema, 'A page of admissions.'), 400: err('Invalid query.'), ...common },
    }),
    get: createRoute({
      method: 'get',
      path: '/requests/{id}',
      summary: 'Get one admission',
      ...secured,
      request: { params: idParam },
      responses: { 200: json(admissionSchema, 'The admission.'), 400: err('Invalid id.'), 404: err('No such admission for this tenant.'), ...common },
    }),
    scale: createRoute({
      method: 'patch',
      path: '/requests/{id}',
      summary: 'Change the replicas of an admission',
      description:
        'An increase charges its delta at once, all or nothing (409 quota_exceeded otherwise: nothing changes); a decrease is refunded ' +
        'only once the surplus pods are gone. One change at a time per admission (409 change_pending while one is in flight). ' +
        'A retry with the same Idempotency-Key and body returns the admission (200); a different body is 422.',
      security: secured.security,
      middleware: [...secured.middleware, ...jsonBody],
      request: {
        params: idParam,
        headers: z.object({ 'idempotency-key': idempotencyKey.describe('Client-chosen key, per admission; a retry with the same key and body changes nothing again.') }),
        body: { required: true, content: { 'application/json': { schema: scaleRequestSchema(maxReplicas) } } },
      },
      responses: {
        202: json(admissionSchema, 'Change accepted: see pendingChange.'),
        200: json(admissionSchema, 'Nothing to change (already at these replicas), or the change made earlier with this Idempotency-Key.'),
        400: err('Invalid request or id.'),
        404: err('No such admission for this tenant.'),
        409: err('Quota exceeded (details.shortfalls), a change still in flight (change_pending), or the admission no longer runs (conflict).'),
        413: err('Body too large.'),
        415: err('Not JSON.'),
        422: err('Idempotency-Key reused with a different body.'),
        ...common,
      },
    }),
    remove: createRoute({
      method: 'delete',
      path: '/requests/{id}',
      summary: 'Delete an admission (idempotent)',
      description:
        'Moves the admission to `deleting`; quota is released only once its pods are really gone. A queued admission is cancelled ' +
        '(`cancelled`, never charged) unless it was admitted first: then it is deleted as any admission.',
      ...secured,
      request: { params: idParam },
      responses: {
        202: json(admissionSchema, 'Deletion accepted (or already under way).'),
        400: err('Invalid id.'),
        404: err('No such admission for this tenant.'),
        409: err('The admission is in conflict; an operator must resolve it.'),
        ...common,
      },
    }),
    queue: createRoute({
      method: 'get',
      path: '/queue',
      summary: "The calling tenant's queued admissions, with positions and estimated waits",
      ...secured,
      responses: { 200: json(queueViewSchema, 'The queue in admission order (the first 100).'), ...common },
    }),
    quota: createRoute({
      method: 'get',
      path: '/quota',
      summary: 'Quota and usage of the calling tenant',
      ...secured,
      responses: { 200: json(quotaSchema, 'Per resource: hard, reserved, active, releasing, blocked.'), ...common },
    }),
    models: createRoute({
      method: 'get',
      path: '/v1/models',
      summary: 'The ready models of the calling tenant (OpenAI list)',
      description: `The admissions in state \`ready\`, newest first (at most ${MODEL_LIST_LIMIT}). Each is called at /v1/models/{id}/chat/completions or /v1/models/{id}/completions.`,
      ...secured,
      responses: {
        200: json(modelListSchema, 'The ready models.'),
        401: common[401],
        429: common[429],
        503: err('inference_unavailable: calling models is not enabled on this service; database_unavailable.'),
      },
    }),
    chatCompletions: inferenceRoute('chat/completions', 'Chat completion from a model (OpenAI-compatible, streaming with "stream": true)'),
    completions: inferenceRoute('completions', 'Text completion from a model (OpenAI-compatible, streaming with "stream": true)'),
    health: createRoute({
      method: 'get',
      path: '/healthz',
      summary: 'Liveness; with a key also database reachability',
      description:
        'Anonymous: a static liveness answer that touches no database. With a tenant key (Authorization: Bearer): the key is ' +
        'checked, the tenant rate limit applies, and the database must answer (the deep check).',
      middleware: [optionalAuth],
      responses: {
        200: json(healthSchema, 'Up (with a key: the database answered too).'),
        401: err('An invalid API key was sent.'),
        429: tooMany,
        503: err('The database is unavailable (deep check only).'),
      },
    }),
  };
}
