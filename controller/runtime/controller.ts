// A Controller = one collapsing work queue + N workers + one reconcile function.
// The contract (controller-runtime's): reconcile(request) gets only namespace/name, reads the
// full current state itself, and answers
//   - {} / undefined          success: the key's backoff is reset
//   - { requeueAfterMs }      check again later (e.g. waiting for children to be deleted)
//   - throw TerminalError     give up until the object changes: no retry, counted, logged
//   - throw anything else     retry with per-key exponential backoff and jitter
// A 409 Conflict additionally marks the key `fresh`: its next reconcile must read from the API
// server, never from the (possibly stale) cache that produced the conflicting write.
import { childAbort } from './abort.ts';
import { errorMessage, isConflict, KubeApiError, TerminalError } from './errors.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';

export interface Request {
  namespace: string;
  name: string;
  key: string;
}

export interface Result {
  requeueAfterMs?: number;
  requeue?: boolean;
}

export interface ReconcileContext {
  log: Logger;
  /** True after a conflict: read the current state from the API server, not the cache. */
  fresh: boolean;
  /** Aborted when the controller stops: pass it to every API and database call. */
  signal: AbortSignal;
}

export type Reconcile = (req: Request, ctx: ReconcileContext) => Promise<Result | void>;

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  workers?: number;
  log: Logger;
  metrics?: Metrics;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Event-driven enqueues wait this long, so a burst of events for one key within the window
   * costs one reconcile (an idle worker would otherwise take the key at the first event and
   * each later event would re-queue it). 0 enqueues at once.
   */
  batchDelayMs?: number;
  /** Re-enqueue every key from `keys()` this often (jittered ±10 %); 0 disables. */
  resyncMs?: number;
  keys?: () => string[];
}

export const keyOf = (namespace: string | undefined, name: string): string => (namespace ? `${namespace}/${name}` : name);

export function splitKey(key: string): Request {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key, key } : { namespace: key.slice(0, i), name: key.slice(i + 1), key };
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #o: ControllerOptions;
  readonly #fresh = new Set<string>();
  #workers: Array<Promise<void>> = [];
  #resync: NodeJS.Timeout | undefined;
  #abort = new AbortController();

  constructor(o: ControllerOptions) {
    this.name = o.name;
    this.#o = o;
    this.queue = new WorkQueue({ name: o.name, baseDelayMs: o.baseDelayMs, maxDelayMs: o.maxDelayMs, metrics: o.metrics });
    // Like controller-runtime: every series exists (at 0) from the start, so rate() and alerts work.
    const controller = o.name;
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) o.metrics?.reconcileTotal.inc({ controller, result }, 0);
    o.metrics?.reconcileErrors.inc({ controller }, 0);
    o.metrics?.terminalErrors.inc({ controller }, 0);
    o.metrics?.activeWorkers.set({ controller }, 0);
  }

  /** Enqueue from an informer event (after the batch delay). */
  enqueue(key: string | undefined): void {
    if (!key) return;
    const delay = this.#o.batchDelayMs ?? 0;
    if (delay > 0) this.queue.addAfter(key, delay);
    else this.queue.add(key);
  }

  /** Enqueue work someone waits for (a claimed outbox row): at once, ahead of event-driven keys. */
  enqueueWork(key: string): void {
    this.queue.add(key, 'high');
  }

  get started(): boolean {
    return this.#workers.length > 0;
  }

  /** Starts the workers and the periodic resync; in-flight reconciles are aborted when `signal` aborts or on stop(). */
  start(signal?: AbortSignal): void {
    if (this.started) return;
    this.#abort = childAbort(signal);
    const n = Math.max(1, this.#o.workers ?? 2);
    this.#workers = Array.from({ length: n }, () => this.#worker());
    for (const key of this.#o.keys?.() ?? []) this.queue.add(key);
    this.#scheduleResync();
    this.#o.log.info('controller started', { controller: this.name, workers: n });
  }

  /** Stops taking keys, aborts in-flight reconciles and waits until every one has returned. */
  async stop(): Promise<void> {
    clearTimeout(this.#resync);
    this.queue.shutDown();
    this.#abort.abort(new Error(`controller ${this.name} stopping`));
    await Promise.all(this.#workers);
  }

  /** Runs one reconcile of `key` outside the queue, with the same bookkeeping (tests, tools). */
  async reconcileOnce(key: string): Promise<'success' | 'requeue' | 'requeue_after' | 'error'> {
    return this.#process(key);
  }

  #scheduleResync(): void {
    const every = this.#o.resyncMs ?? 0;
    if (every <= 0 || !this.#o.keys) return;
    this.#resync = setTimeout(
      () => {
        for (const key of this.#o.keys?.() ?? []) this.queue.add(key);
        this.#scheduleResync();
      },
      every * (0.9 + Math.random() * 0.2),
    );
    this.#resync.unref();
  }

  async #worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        const result = await this.#process(key);
        if (result === 'requeue') this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #process(key: string): Promise<'success' | 'requeue' | 'requeue_after' | 'error'> {
    const { metrics, log } = this.#o;
    const controller = this.name;
    const t0 = performance.now();
    metrics?.activeWorkers.inc({ controller });
    const fresh = this.#fresh.has(key);
    const klog = log.child({ controller, key });
    let result: 'success' | 'requeue' | 'requeue_after' | 'error';
    try {
      const signal = this.#abort.signal;
      const res = (await this.#o.reconcile(splitKey(key), { log: klog, fresh, signal })) ?? {};
      this.#fresh.delete(key);
      if (res.requeueAfterMs !== undefined && res.requeueAfterMs > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, res.requeueAfterMs);
        result = 'requeue_after';
      } else if (res.requeue) {
        result = 'requeue';
      } else {
        this.queue.forget(key);
        result = 'success';
      }
    } catch (err) {
      result = 'error';
      metrics?.reconcileErrors.inc({ controller });
      if (this.#abort.signal.aborted) {
        klog.info('reconcile abandoned: the controller is stopping', { err: errorMessage(err) });
      } else if (err instanceof TerminalError) {
        metrics?.terminalErrors.inc({ controller });
        this.queue.forget(key);
        klog.error('reconcile failed terminally; not retrying until the object changes', { reason: err.reason, err: err.message });
      } else {
        if (isConflict(err)) this.#fresh.add(key);
        // The API server's Retry-After (429 / 503) replaces our own backoff for this attempt.
        const retryAfterMs = err instanceof KubeApiError && err.retryAfterSeconds ? err.retryAfterSeconds * 1000 : 0;
        if (retryAfterMs > 0) this.queue.addAfter(key, retryAfterMs);
        const delayMs = retryAfterMs > 0 ? retryAfterMs : Math.round(this.queue.addRateLimited(key));
        const level = isConflict(err) ? 'info' : 'warn';
        klog[level]('reconcile failed; will retry', { err: errorMessage(err), conflict: isConflict(err), delayMs });
      }
    } finally {
      metrics?.activeWorkers.dec({ controller });
    }
    metrics?.reconcileTotal.inc({ controller, result });
    metrics?.reconcileTime.observe({ controller }, (performance.now() - t0) / 1000);
    return result;
  }
}
