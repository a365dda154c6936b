// Why a call to the in-cluster gateway produced no answer to pass on. Thrown by the forwarder,
// rendered by errors.ts (toApiError) like every other error: unreachable and refused → 502
// gateway_error, timeout → 504 gateway_timeout, client_closed → 499. `message` is for the log
// only (never a credential in it); the caller gets the fixed text of its kind.

export type GatewayFailureKind =
  /** fetch failed: connection refused, DNS, reset. */
  | 'unreachable'
  /** The gateway answered, but not with something to pass on: it refused our credential (401) or redirected. */
  | 'refused'
  /** Its response headers did not arrive within GATEWAY_HEADERS_TIMEOUT_MS. */
  | 'timeout'
  /** The tenant's client went away before the headers arrived. */
  | 'client_closed';

export class GatewayFailure extends Error {
  readonly kind: GatewayFailureKind;
  constructor(kind: GatewayFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatewayFailure';
    this.kind = kind;
  }
}
