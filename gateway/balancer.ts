// The picker with its memory: the load book's snapshot and one rotation cursor per route, so two
// admissions' requests interleaving never steer each other's ties. A route recomputed after its
// slices changed is a new object and starts its rotation afresh (WeakMap: nothing to clean up).
import type { LoadBook } from './load-book.ts';
import { pick, type Picked, type PickOptions } from './picker.ts';
import type { Endpoint, Route } from './routes.ts';

export class Balancer {
  readonly #book: LoadBook;
  readonly #opts: PickOptions;
  readonly #now: () => number;
  readonly #cursors = new WeakMap<Route, number>();

  constructor(book: LoadBook, opts: PickOptions, now: () => number) {
    this.#book = book;
    this.#opts = opts;
    this.#now = now;
  }

  /** The next endpoint of `route` among `candidates` (its endpoints not tried yet). */
  choose(route: Route, candidates: readonly Endpoint[]): Picked | undefined {
    const picked = pick(candidates, { loads: this.#book.loads, cursor: this.#cursors.get(route) ?? 0 }, this.#now(), this.#opts);
    if (picked) this.#cursors.set(route, picked.cursor);
    return picked;
  }
}
