// Client-side rate limiting of API writes: a token bucket of `qps` tokens per second holding
// at most `burst` (client-go's flowcontrol.NewTokenBucketRateLimiter). `take()` resolves when a
// token is available; waiters are served in order. The clock and sleep are injectable for tests.
import { setTimeout as sleepMs } from 'node:timers/promises';

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
  #tail: Promise<void> = Promise.resolve();

  constructor({ qps, burst, now = () => performance.now(), sleep = (ms) => sleepMs(ms) }: RateLimiterOptions) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error(`rate limiter needs qps > 0 and burst >= 1 (got ${qps}/${burst})`);
    this.#qps = qps;
    this.#burst = burst;
    this.#now = now;
    this.#sleep = sleep;
    this.#tokens = burst;
    this.#last = now();
  }

  /** Waits for one token. Callers are served FIFO (a chain of promises). */
  take(): Promise<void> {
    const turn = this.#tail.then(() => this.#takeOne());
    this.#tail = turn.catch(() => undefined);
    return turn;
  }

  async #takeOne(): Promise<void> {
    this.#refill();
    if (this.#tokens < 1) {
      await this.#sleep(((1 - this.#tokens) / this.#qps) * 1000);
      this.#refill();
    }
    this.#tokens -= 1;
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
  }
}
