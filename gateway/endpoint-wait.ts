// Waiting for an admission's first ready endpoint. The edge forwards a request once the ledger
// says the admission is ready, which the controller derives from the same EndpointSlices this
// gateway watches; its informer may see them a few milliseconds later, and a brand-new
// admission's slice may not be in the table at all yet. Failing at once would turn that lag into
// a 503 for the first request; so the request waits, re-reading the table at each change, until
// a ready endpoint appears, the wait is over, or the request itself ends (client gone, deadline).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Resolution } from './routes.ts';

/** Between two reads of a route source that cannot say when it changed (a fixed table). */
export const ENDPOINT_POLL_MS = 50;

export interface EndpointWaitOptions {
  /** The request's resolution against the table now. */
  resolve: () => Resolution;
  /** Resolves at the table's next change, or at once when `signal` aborts (RouteSource.changed). */
  changed?: (signal: AbortSignal) => Promise<void>;
  /** ENDPOINT_WAIT_MS: 0 answers at once. */
  waitMs: number;
  /** The request ended (client gone or its deadline): the wait ends at once. */
  signal: AbortSignal;
  pollMs?: number;
}

/** Whether the resolution may still change into a route by waiting. */
export const waitable = (r: Resolution): boolean => r.kind === 'unknown' || r.kind === 'no_ready_endpoint';

/**
 * The first resolution that is not waitable, or the one at the end of the wait (over, or `signal`
 * aborted: the caller tells which from its signals).
 */
export async function waitForEndpoint(o: EndpointWaitOptions): Promise<Resolution> {
  const first = o.resolve();
  if (!waitable(first) || o.waitMs <= 0 || o.signal.aborted) return first;
  const over = new AbortController();
  const timer = setTimeout(() => over.abort(), o.waitMs);
  const stop = AbortSignal.any([o.signal, over.signal]);
  try {
    while (!stop.aborted) {
      // Listen before reading: a change between the read and the listening would be missed.
      const next = o.changed ? o.changed(stop) : sleep(o.pollMs ?? ENDPOINT_POLL_MS, undefined, { signal: stop }).catch(() => undefined);
      const r = o.resolve();
      if (!waitable(r)) return r;
      await next;
    }
    return o.resolve(); // the table as the wait ends, not as it was before the last change
  } finally {
    clearTimeout(timer);
    over.abort(); // releases the listener of a change still awaited
  }
}
