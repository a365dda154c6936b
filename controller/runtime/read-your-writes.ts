// Read-your-writes over an informer cache. After the controller writes an object, its cache
// holds the older version until the watch event arrives (milliseconds later); a reconcile
// running in between would compute from that older copy and get a 409 on its next write.
// The tracker remembers the object each write returned, and serves it instead of the cache
// until the cache has delivered that very resourceVersion (or `ttlMs` passed — e.g. a relist
// jumped over it). The cache is then known to be at least as new as our write. The watch event
// of a write can arrive BEFORE the write's response: the last few resourceVersions delivered
// per object are kept, so such a write is never tracked.
import type { KubeObject } from './informer.ts';

export class WriteTracker {
  readonly #written = new Map<string, { obj: KubeObject; at: number }>();
  readonly #delivered = new Map<string, string[]>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor({ ttlMs = 30_000, now = () => performance.now() }: { ttlMs?: number; now?: () => number } = {}) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  static id = (kind: string, ns: string | undefined, name: string) => `${kind}/${ns ?? ''}/${name}`;

  /** Remember what a write returned (the newest version we know of). */
  wrote(kind: string, obj: KubeObject | undefined): void {
    const rv = obj?.metadata?.resourceVersion;
    if (!obj || !rv) return;
    const id = WriteTracker.id(kind, obj.metadata.namespace, obj.metadata.name);
    if (this.#delivered.get(id)?.includes(rv)) return; // the cache already has it (or newer)
    this.#written.set(id, { obj, at: this.#now() });
  }

  /** Feed every cached object the informer delivers: once it shows our write, the cache is current. */
  observed(kind: string, obj: KubeObject): void {
    const id = WriteTracker.id(kind, obj.metadata.namespace, obj.metadata.name);
    const rv = obj.metadata.resourceVersion ?? '';
    const seen = this.#delivered.get(id) ?? [];
    seen.push(rv);
    if (seen.length > 16) seen.shift();
    this.#delivered.set(id, seen);
    if (this.#written.get(id)?.obj.metadata.resourceVersion === rv) this.#written.delete(id);
  }

  forget(kind: string, ns: string | undefined, name: string): void {
    const id = WriteTracker.id(kind, ns, name);
    this.#written.delete(id);
    this.#delivered.delete(id);
  }

  /** The cached object, or our newer written one while the cache has not caught up. */
  read<T extends KubeObject>(kind: string, ns: string, name: string, cached: T | undefined): T | undefined {
    const id = WriteTracker.id(kind, ns, name);
    const w = this.#written.get(id);
    if (!w) return cached;
    if (this.#now() - w.at > this.#ttlMs || cached?.metadata.resourceVersion === w.obj.metadata.resourceVersion) {
      this.#written.delete(id);
      return cached;
    }
    if (cached && cached.metadata.uid !== w.obj.metadata.uid) return cached; // replaced meanwhile: trust the cache
    return w.obj as T;
  }
}
