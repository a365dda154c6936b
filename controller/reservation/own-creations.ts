// The ModelServices this process just created. The informer's add event of such a CR, at the very
// resourceVersion the create answered, carries nothing the delivery did not already know (the
// delivery has acknowledged it and scheduled the never-Ready deadline itself): the ledger does not
// requeue its key for it. Any later event (a status, a deletion) has a newer resourceVersion and
// is news. An entry is used once; one whose event never came (it arrived before the create's
// answer, or the watch restarted) is dropped after `maxAgeMs`.
interface Created {
  metadata: { uid?: string; resourceVersion?: string };
}

export class OwnCreations {
  readonly #created = new Map<string, { resourceVersion: string; at: number }>();
  readonly #maxAgeMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(o: { maxAgeMs?: number; max?: number; now?: () => number } = {}) {
    this.#maxAgeMs = o.maxAgeMs ?? 60_000;
    this.#max = o.max ?? 10_000;
    this.#now = o.now ?? (() => performance.now());
  }

  /** Records a CR as the create answered it. */
  note(obj: Created): void {
    const { uid, resourceVersion } = obj.metadata;
    if (!uid || !resourceVersion) return;
    const at = this.#now();
    for (const [k, e] of this.#created) {
      if (at - e.at <= this.#maxAgeMs && this.#created.size < this.#max) break; // oldest first: the rest are younger
      this.#created.delete(k);
    }
    this.#created.set(uid, { resourceVersion, at });
  }

  /** True (once) when `obj` is a CR this process created, unchanged since its create answered. */
  isEcho(obj: Created): boolean {
    const { uid, resourceVersion } = obj.metadata;
    const e = uid === undefined ? undefined : this.#created.get(uid);
    if (!e || !uid) return false;
    this.#created.delete(uid);
    return e.resourceVersion === resourceVersion && this.#now() - e.at <= this.#maxAgeMs;
  }

  get size(): number {
    return this.#created.size;
  }
}
