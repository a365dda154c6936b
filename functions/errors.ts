// Typed API errors. Handlers and services throw these; ONE onError (app.ts) renders every
// error as {error: {code, message, details?}} via toErrorResponse().
import { HTTPException } from 'hono/http-exception';
import type { ClusterShort, ErrorCode, ErrorEnvelope, FieldIssue, Shortfall } from '../schema/api.ts';
import type { ReservationState } from '../schema/admission.ts';
import { DatabaseUnavailable } from '../ledger/db.ts';
import { GatewayFailure } from './inference/gateway-failure.ts';

/** 499: the client closed the request before its answer (nginx's code; nobody reads the body, the access log does). */
export type ErrorStatus = 400 | 401 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 499 | 500 | 502 | 503 | 504;

export class ApiError extends Error {
  readonly status: ErrorStatus;
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly headers: Record<string, string>;
  constructor(status: ErrorStatus, code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

/** At most this many field issues are returned (a hostile body can carry thousands). */
export const MAX_ISSUES = 20;

export function validationFailed(all: FieldIssue[]): ApiError {
  const issues = all.slice(0, MAX_ISSUES);
  const more = all.length - issues.length;
  const text = issues.map((i) => `${i.path || '(body)'}: ${i.message}`).join('; ') + (more > 0 ? `; and ${more} more` : '');
  return new ApiError(400, 'validation_failed', `invalid request: ${text}`, more > 0 ? { issues, omitted: more } : { issues });
}

export const unauthorized = (message: string, error: 'invalid_request' | 'invalid_token' | undefined) =>
  new ApiError(401, 'unauthorized', message, undefined, {
    'WWW-Authenticate': `Bearer realm="modeldock"${error ? `, error="${error}"` : ''}`,
  });

export const notFound = (what = 'resource') => new ApiError(404, 'not_found', `${what} not found`);

/** Short of quota, or (`queued` > 0) the tenant has admissions queued for quota: nothing passes them. */
export const quotaExceeded = (shortfalls: Shortfall[], queued = 0) =>
  new ApiError(
    409,
    'quota_exceeded',
    [
      ...(shortfalls.length > 0 ? [`quota exceeded: ${shortfalls.map((s) => `${s.resource} short by ${s.short} (requested ${s.requested}, available ${s.available})`).join('; ')}`] : []),
      ...(queued > 0 ? [`${queued} admission${queued === 1 ? ' is' : 's are'} queued for this tenant's quota and nothing passes them (send "onShortQuota": "queue" to wait behind them)`] : []),
    ].join('; '),
    queued > 0 ? { shortfalls, queued } : { shortfalls },
  );

/** The quota fits, but no cluster has room for the admission (docs/multi-cluster.md "T1"). */
export const noClusterCapacity = (clusters: ClusterShort[]) =>
  new ApiError(
    409,
    'no_cluster_capacity',
    clusters.length === 0
      ? 'no cluster takes new admissions now (none is ready)'
      : `no cluster has room for this admission: ${clusters.map((c) => `${c.cluster} lacks ${c.resources.join(', ')}`).join('; ')}`,
    { clusters },
  );

/** An increase fits the quota, but not the admission's cluster. */
export const clusterCapacityExceeded = (cluster: string) =>
  new ApiError(409, 'cluster_capacity_exceeded', `cluster ${cluster}, where this admission runs, has no room for the increase`, { cluster });

export const idempotencyKeyReused = () =>
  new ApiError(422, 'idempotency_key_reused', 'this Idempotency-Key was already used with a different request body');

/** Over a rate limit: retry after `periodSeconds` at the latest (the limiter's window has rolled over by then). */
export const rateLimited = (scope: 'ip' | 'tenant', periodSeconds: number) =>
  new ApiError(
    429,
    'rate_limited',
    `too many requests ${scope === 'tenant' ? 'for this tenant' : 'from this address'}; retry after ${periodSeconds} s`,
    { limit: scope, retryAfterSeconds: periodSeconds },
    { 'Retry-After': String(periodSeconds) },
  );

/** The one message a caller gets for any configuration problem: the detail is in the server's log only. */
export const MISCONFIGURED_MESSAGE = 'the service is misconfigured; its operator has been notified';
export const misconfigured = () => new ApiError(500, 'misconfigured', MISCONFIGURED_MESSAGE);

/** A model is called only while its admission is ready (a DELETE refuses the next call at once). */
export const modelNotReady = (state: ReservationState) =>
  new ApiError(409, 'model_not_ready', `this model is ${state}: it takes requests only while its admission is ready`, { state });

/** The Worker has no gateway configured (GATEWAY_URL and GATEWAY_CREDENTIAL_KEY unset): the admission API still works. */
export const inferenceUnavailable = () => new ApiError(503, 'inference_unavailable', 'calling models is not enabled on this service');

/** No replica can take the request now (none ready, or the gateway restarting): retry after `retryAfter` seconds. */
export const modelUnavailable = (retryAfter: number) =>
  new ApiError(503, 'model_unavailable', `no replica of this model can take the request now; retry after ${retryAfter} s`, { retryAfterSeconds: retryAfter }, { 'Retry-After': String(retryAfter) });

const GATEWAY_ERRORS: Record<GatewayFailure['kind'], () => ApiError> = {
  // Our side failed (the gateway unreachable, our credential refused): nothing the tenant can fix.
  unreachable: () => new ApiError(502, 'gateway_error', 'the model gateway could not be reached; retry later'),
  refused: () => new ApiError(502, 'gateway_error', 'the model gateway refused the request; its operator has been notified'),
  timeout: () => new ApiError(504, 'gateway_timeout', 'the model did not start answering in time'),
  client_closed: () => new ApiError(499, 'client_closed', 'the client closed the request'),
};

const HTTP_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Maps anything thrown to an API error; unknown errors are 500 `internal` (message not leaked). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof GatewayFailure) return GATEWAY_ERRORS[err.kind]();
  if (err instanceof DatabaseUnavailable) return new ApiError(503, 'database_unavailable', 'the database is unavailable; retry later', undefined, { 'Retry-After': '1' });
  if (err instanceof HTTPException) {
    const status = err.status as number;
    if (status === 400 && /json/i.test(err.message)) return new ApiError(400, 'malformed_json', 'the request body is not valid JSON');
    const code = HTTP_CODES[status];
    if (code) return new ApiError(status as ErrorStatus, code, err.message || code.replace(/_/g, ' '));
  }
  return new ApiError(500, 'internal', 'internal error');
}

export function envelope(err: ApiError): ErrorEnvelope {
  return { error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) } };
}
