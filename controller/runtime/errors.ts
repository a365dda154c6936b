// Errors of the controller runtime, as data:
// - KubeApiError: a non-2xx answer of the API server, with its parsed v1.Status (`reason`).
// - TerminalError: the reconciler gives up on this key until the object changes (no retry).
// - anything else is retried with per-key exponential backoff.
// A 409 Conflict is retryable but special: the next attempt must re-read from the API server,
// never retry on the stale copy (see Controller).

export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: Array<{ reason?: string; message?: string; field?: string }> };
}

export class KubeApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly status: KubeStatus | undefined;
  readonly retryAfterSeconds: number | undefined;
  constructor(method: string, path: string, code: number, status: KubeStatus | undefined, retryAfterSeconds?: number) {
    super(`${method} ${path}: ${code} ${status?.reason ?? ''} ${status?.message ?? ''}`.trim());
    this.name = 'KubeApiError';
    this.code = code;
    this.reason = status?.reason ?? '';
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class TerminalError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = 'TerminalError';
    this.reason = reason;
  }
}

export const isApiError = (e: unknown, code?: number): e is KubeApiError =>
  e instanceof KubeApiError && (code === undefined || e.code === code);
export const isNotFound = (e: unknown): boolean => isApiError(e, 404);
/** 409 of any kind: stale resourceVersion (Conflict), failed precondition, or AlreadyExists. */
export const isConflict = (e: unknown): boolean => isApiError(e, 409);
export const isAlreadyExists = (e: unknown): boolean => isApiError(e, 409) && e.reason === 'AlreadyExists';

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
