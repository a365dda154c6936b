// The signal of a call to the gateway: aborted when the tenant's client goes away (at any time,
// the stream included) or when the gateway's response headers are late. The deadline covers only
// the wait for the headers — a queued request gets them when a model slot takes it — and is
// disarmed once they are in: a stream is never cut for lasting long, only for its client leaving.

export interface HeadersDeadline {
  /** Give this to fetch: the client's signal, or the deadline, whichever aborts first. */
  readonly signal: AbortSignal;
  /** True once the deadline (not the client) aborted the signal. */
  readonly timedOut: boolean;
  /** The headers are in (or the call is over): the deadline no longer applies. Idempotent. */
  disarm(): void;
}

export function headersDeadline(client: AbortSignal, ms: number): HeadersDeadline {
  const deadline = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    deadline.abort(new DOMException(`no response headers from the gateway within ${ms} ms`, 'TimeoutError'));
  }, ms);
  return {
    signal: AbortSignal.any([client, deadline.signal]),
    get timedOut() {
      return timedOut;
    },
    disarm: () => clearTimeout(timer),
  };
}
