// A leader's periodic work (a Runnable of the manager): `tick` at start and then every `everyMs`,
// jittered by ±10 % so the loops of many processes spread out; a failed tick is logged and the next
// one runs on time. The ledger resync, the queue sweep, the tenant sync, the autoscaler and the
// cluster supervisor run on it.
import { childAbort } from './abort.ts';
import { errorMessage } from './errors.ts';
import type { Logger } from './log.ts';

/** Runs `tick` at start and then every `everyMs` (jittered) while leading; 0 disables it. */
export class PeriodicLoop {
  readonly #everyMs: number;
  readonly #tick: (signal: AbortSignal) => Promise<void>;
  readonly #log: Logger;
  /** What the loop does, in its log lines ("ledger resync failed"). */
  readonly #what: string;
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #abort = new AbortController();
  #running: Promise<void> | undefined;

  constructor(everyMs: number, tick: (signal: AbortSignal) => Promise<void>, log: Logger, what: string) {
    this.#everyMs = everyMs;
    this.#tick = tick;
    this.#log = log;
    this.#what = what;
  }

  get started(): boolean {
    return this.#started;
  }

  start(signal?: AbortSignal): void {
    this.#started = true;
    this.#abort = childAbort(signal);
    if (this.#everyMs > 0) this.#running = this.#run();
  }

  async stop(): Promise<void> {
    this.#started = false;
    clearTimeout(this.#timer);
    this.#abort.abort(new Error(`${this.#what} stopping`));
    await this.#running;
  }

  async #run(): Promise<void> {
    if (!this.#started) return;
    await this.#tick(this.#abort.signal).catch((err: unknown) => {
      if (this.#started) this.#log.warn(`${this.#what} failed`, { err: errorMessage(err) });
    });
    if (!this.#started) return;
    this.#timer = setTimeout(() => (this.#running = this.#run()), this.#everyMs * (0.9 + Math.random() * 0.2));
    this.#timer.unref();
  }
}
