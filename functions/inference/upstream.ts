// What to do with the gateway's answer (pure). The model's own answers — 200 with its stream,
// 400, 404, 429, … — pass through as they are. Three are the gateway speaking for itself and are
// translated: a 401 means it refused OUR credential (the edge's misconfiguration, never the
// tenant's: 502 gateway_error, logged); a redirect is not something to follow with a credential
// (502 too); a 503 whose JSON error code says no replica can take the request (no_ready_endpoint,
// or shutting_down while the gateway restarts) is 503 model_unavailable with its Retry-After.

/** The gateway's 503 codes that mean "retry shortly" (gateway/errors.ts). */
export const GATEWAY_BUSY_CODES: ReadonlySet<string> = new Set(['no_ready_endpoint', 'shutting_down']);
/** A 503 body is read (under the headers deadline) to find its code only up to this size: the gateway's are a few hundred bytes. */
export const GATEWAY_ERROR_MAX_BYTES = 8192;
/** Retry-After of a model_unavailable when the gateway gave none we can read (seconds). */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** The headers a tenant gets from upstream: the body's type and caching, a retry hint, the request id. */
export const PASSED_HEADERS = ['content-type', 'cache-control', 'retry-after', 'x-request-id'] as const;

export type Verdict =
  | { kind: 'pass' }
  /** Read the body (a small JSON error) and decide with `verdictOfError`. */
  | { kind: 'read' }
  | { kind: 'refused'; why: string };

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

/** Decides from the status and headers alone, when it can. */
export function verdictOf(status: number, headers: Headers): Verdict {
  if (status === 401) return { kind: 'refused', why: 'the gateway refused the edge credential (401): GATEWAY_CREDENTIAL_KEY is not among the gateway\'s keys, or the clocks differ' };
  if (status >= 300 && status < 400) return { kind: 'refused', why: `the gateway answered a redirect (${status}); GATEWAY_URL must name the gateway itself` };
  if (status === 503 && JSON_TYPE.test(headers.get('content-type') ?? '')) {
    const length = Number(headers.get('content-length') ?? NaN);
    if (Number.isInteger(length) && length >= 0 && length <= GATEWAY_ERROR_MAX_BYTES) return { kind: 'read' };
  }
  return { kind: 'pass' };
}

/** A read 503 body: the gateway's "retry shortly" (with the seconds), or undefined to pass it through. */
export function busyRetryAfter(body: string, retryAfter: string | null): number | undefined {
  let code: unknown;
  try {
    code = (JSON.parse(body) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    return undefined;
  }
  if (typeof code !== 'string' || !GATEWAY_BUSY_CODES.has(code)) return undefined;
  const seconds = retryAfter !== null && /^\d{1,5}$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) : DEFAULT_RETRY_AFTER_SECONDS;
  return Math.max(seconds, DEFAULT_RETRY_AFTER_SECONDS);
}

/** The passed headers of an upstream response (nothing else of the gateway's or the model's goes out). */
export function passedHeaders(from: Headers): Headers {
  const out = new Headers();
  for (const name of PASSED_HEADERS) {
    const v = from.get(name);
    if (v !== null) out.set(name, v);
  }
  return out;
}
