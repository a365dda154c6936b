// Client-side rate limiting of API writes: a token bucket of `qps` tokens per second holding
// at most `burst` (client-go's flowcontrol.NewTokenBucketRateLimiter). `take()` resolves when a
// token is available; waiters are served in order, `high` ones before every `normal` one (the
// ledger's deliveries go first, so an admission's CR is not queued behind a burst of reconcile
// writes). The clock and sleep are injectable for tests.
import { setTimeout as sleepMs } from 'node:timers/promises';

/** Who goes first: `high` waiters before every `normal` one (the rate limiter's and the work queue's). */
export type Priority = 'high' | 'normal';

export interface RateLimiterOptions {
  qps: number;
  burst: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<unknown>;
}

export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<unknown>;
  #tokens: number;
  #last: number;
  readonly #high: Array<() => void> = [];
  readonly #normal: Array<() => void> = [];
  #draining = false;

  constructor({ qps, burst, now = () => performance.now(), sleep = (ms) => sleepMs(ms) }: RateLimiterOptions) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error(`rate limiter needs qps > 0 and burst >= 1 (got ${qps}/${burst})`);
    this.#qps = qps;
    this.#burst = burst;
    this.#now = now;
    this.#sleep = sleep;
    this.#tokens = burst;
    this.#last = now();
  }

  /** Waits for one token. Callers are served FIFO within a priority, `high` before `normal`. */
  take(priority: Priority = 'normal'): Promise<void> {
    return new Promise<void>((resolve) => {
      (priority === 'high' ? this.#high : this.#normal).push(resolve);
      void this.#drain();
    });
  }

  /** One loop hands out tokens; who gets the next one is decided when it is there. */
  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#high.length > 0 || this.#normal.length > 0) {
        this.#refill();
        if (this.#tokens < 1) {
          await this.#sleep(((1 - this.#tokens) / this.#qps) * 1000);
          continue;
        }
        this.#tokens -= 1;
        (this.#high.shift() ?? this.#normal.shift())?.();
      }
    } finally {
      this.#draining = false;
    }
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
  }
}
