// "Tell me at the next change": waiters resolve when notify() is called, or at once when their
// signal aborts (so a request that ends stops waiting and leaves nothing behind). The route
// table's changed() is one; the tests' changing tables are others.
export class ChangeNotice {
  readonly #waiters = new Set<() => void>();

  /** How many are waiting now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Resolves at the next notify(), or at once when `signal` aborts. */
  next(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Wakes every waiter. */
  notify(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
