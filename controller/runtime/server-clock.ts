// The API server's clock, estimated from the `Date` header of its responses. Times the API server
// stamps (a CR's creationTimestamp) are compared with this, never with the controller's own
// clock: a controller whose clock runs minutes off would otherwise delete a CR early, or never.
// The header has one-second resolution: each response bounds the offset (server − local) to
// [date − receivedAt, date + 1 s − sentAt]; the estimate is the middle of the tightest bounds
// seen among the latest SAMPLES responses, so it is within ½ s plus half a round trip.

const SAMPLES = 32;

export class ServerClock {
  readonly #local: () => number;
  #samples: Array<{ low: number; high: number }> = [];

  /** `local`: the controller's clock in ms (injected; Date.now by default). */
  constructor(local: () => number = Date.now) {
    this.#local = local;
  }

  /** The controller's own clock, in ms: what `observe` expects as sentAt/receivedAt. */
  localMs(): number {
    return this.#local();
  }

  /** One response: its Date header, and the local times the request was sent and its answer received. */
  observe(dateHeader: string | null, sentAt: number, receivedAt: number): void {
    const date = dateHeader ? Date.parse(dateHeader) : NaN;
    if (!Number.isFinite(date) || receivedAt < sentAt) return;
    this.#samples.push({ low: date - receivedAt, high: date + 1000 - sentAt });
    if (this.#samples.length > SAMPLES) this.#samples.shift();
  }

  /** server − local in ms (0 until a response was seen). */
  offsetMs(): number {
    if (this.#samples.length === 0) return 0;
    const low = Math.max(...this.#samples.map((s) => s.low));
    const high = Math.min(...this.#samples.map((s) => s.high));
    // Bounds that do not overlap (the server's clock was stepped): trust the latest response alone.
    const last = this.#samples[this.#samples.length - 1]!;
    return low <= high ? Math.round((low + high) / 2) : Math.round((last.low + last.high) / 2);
  }

  /** The API server's time now, as best known. */
  now(): Date {
    return new Date(this.#local() + this.offsetMs());
  }
}
