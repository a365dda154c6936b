// A collapsing work queue of keys (`namespace/name`) with client-go's workqueue semantics:
// - add(key): a key waiting in the queue is never queued twice ("dirty" set), however many
//   events arrive before a worker takes it;
// - a key being processed is never handed to a second worker; if it is added meanwhile it is
//   queued again once, when done(key) is called;
// - addRateLimited(key): per-key exponential backoff with jitter (base·2^failures, capped);
//   forget(key) resets the count after a success;
// - addAfter(key, ms): requeueAfter; the earliest pending time wins;
// - shutDown(): get() answers undefined to every waiting worker; pending timers are dropped;
// - two priorities (like controller-runtime's priority queue): `high` keys are handed out before
//   every `normal` one, FIFO within each; a waiting key added again as `high` moves up (the
//   ledger's claimed outbox rows are work a tenant waits for; informer events and resyncs are not).
import { jitteredBackoffMs } from './backoff.ts';
import type { Metrics } from './metrics.ts';
import type { Priority } from './rate-limit.ts';

export interface QueueOptions {
  name: string;
  baseDelayMs?: number;
  maxDelayMs?: number;
  metrics?: Metrics;
  random?: () => number;
  now?: () => number;
}

export class WorkQueue {
  readonly name: string;
  readonly #queues: Record<Priority, string[]> = { high: [], normal: [] };
  /** Keys waiting to be processed (queued, or re-queued when done), with their priority. */
  readonly #dirty = new Map<string, Priority>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #delayed = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();
  readonly #waiters: Array<(key: string | undefined) => void> = [];
  readonly #base: number;
  readonly #max: number;
  readonly #metrics: Metrics | undefined;
  readonly #random: () => number;
  readonly #now: () => number;
  #shuttingDown = false;

  constructor({ name, baseDelayMs = 5, maxDelayMs = 300_000, metrics, random = Math.random, now = () => performance.now() }: QueueOptions) {
    this.name = name;
    this.#base = baseDelayMs;
    this.#max = maxDelayMs;
    this.#metrics = metrics;
    this.#random = random;
    this.#now = now;
    metrics?.queueDepth.set({ name }, 0);
    metrics?.queueAdds.inc({ name }, 0);
    metrics?.queueRetries.inc({ name }, 0);
  }

  add(key: string, priority: Priority = 'normal'): void {
    if (this.#shuttingDown) return;
    const waiting = this.#dirty.get(key);
    if (waiting !== undefined) {
      if (priority === 'high' && waiting === 'normal') this.#promote(key);
      return;
    }
    this.#dirty.set(key, priority);
    this.#addedAt.set(key, this.#now());
    this.#metrics?.queueAdds.inc({ name: this.name });
    if (this.#processing.has(key)) return; // done(key) queues it again
    this.#push(key, priority);
  }

  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const due = this.#now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref?.();
    this.#delayed.set(key, { due, timer });
  }

  /** Requeue after this key's backoff: base·2^n with "equal jitter" (half fixed, half random), capped. */
  addRateLimited(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    const delay = jitteredBackoffMs(n, this.#base, this.#max, this.#random);
    this.#metrics?.queueRetries.inc({ name: this.name });
    this.addAfter(key, delay);
    return delay;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key to process (FIFO within a priority, high first); waits while the queue is empty; undefined after shutDown. */
  get(): Promise<string | undefined> {
    const key = this.#queues.high.shift() ?? this.#queues.normal.shift();
    if (key !== undefined) return Promise.resolve(this.#take(key));
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks the key processed; if it was added while processing, it is queued again now. */
  done(key: string): void {
    this.#processing.delete(key);
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) this.#metrics?.workDuration.observe({ name: this.name }, (this.#now() - started) / 1000);
    const again = this.#dirty.get(key);
    if (again !== undefined) this.#push(key, again);
  }

  len(): number {
    return this.#queues.high.length + this.#queues.normal.length;
  }

  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }

  #push(key: string, priority: Priority): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter(this.#take(key));
      return;
    }
    this.#queues[priority].push(key);
    this.#metrics?.queueDepth.set({ name: this.name }, this.len());
  }

  /** A waiting key becomes high; if it sits in the normal queue, it moves to the end of the high one. */
  #promote(key: string): void {
    this.#dirty.set(key, 'high');
    const at = this.#queues.normal.indexOf(key);
    if (at < 0) return; // being processed: done() queues it as high
    this.#queues.normal.splice(at, 1);
    this.#queues.high.push(key);
  }

  #take(key: string): string {
    this.#metrics?.queueDepth.set({ name: this.name }, this.len());
    this.#processing.add(key);
    this.#dirty.delete(key);
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    const now = this.#now();
    if (added !== undefined) this.#metrics?.queueDuration.observe({ name: this.name }, (now - added) / 1000);
    this.#startedAt.set(key, now);
    return key;
  }
}
