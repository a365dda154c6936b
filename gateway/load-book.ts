// The gateway's book of each endpoint's load: its own requests in flight (exact, kept here) and
// the pod's last scrape (kept by the scraper). The picker decides on a snapshot of it.
import type { EndpointLoad } from './picker.ts';

export class LoadBook {
  readonly #loads = new Map<string, EndpointLoad>();

  get loads(): ReadonlyMap<string, EndpointLoad> {
    return this.#loads;
  }

  inflight(key: string): number {
    return this.#loads.get(key)?.inflight ?? 0;
  }

  /** One more request to `key`; the answer ends it (once, however often it is called). */
  acquire(key: string): () => void {
    const entry = this.#entry(key);
    entry.inflight += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.inflight -= 1;
    };
  }

  /** A scrape of `key` sent at `at` (when `inflightAtScrape` requests were in flight) read `value`. */
  scraped(key: string, value: number, at: number, inflightAtScrape: number): void {
    this.#entry(key).scraped = { value, at, inflightAtScrape };
  }

  /** The scrape failed: the pod's gauges are unknown until one succeeds. */
  scrapeFailed(key: string): void {
    const entry = this.#loads.get(key);
    if (entry) delete entry.scraped;
  }

  /**
   * Forgets the endpoints not in `keys` (they left their route). One with requests still in
   * flight keeps its count (a new pod on the same address must not start below it) but not its scrape.
   */
  retain(keys: ReadonlySet<string>): void {
    for (const [key, entry] of this.#loads) {
      if (keys.has(key)) continue;
      if (entry.inflight > 0) delete entry.scraped;
      else this.#loads.delete(key);
    }
  }

  #entry(key: string): EndpointLoad {
    let entry = this.#loads.get(key);
    if (!entry) {
      entry = { inflight: 0 };
      this.#loads.set(key, entry);
    }
    return entry;
  }
}
