// A supervised informer: client-node's ListWatch (list, then watch from the list's
// resourceVersion, relist on 410) wrapped with what it lacks (docs/design.md, "The controller"):
// - the list goes through our KubeClient (plain JSON, paginated, same label selector as the watch);
// - the watch asks for bookmarks and a jittered server timeout; managedFields are stripped from
//   every object before it is cached;
// - on 'error' (ListWatch then stops) it restarts with capped, jittered exponential backoff,
//   never after stop() (stop() itself makes ListWatch emit an AbortError);
// - `synced` turns true only after a successful initial list (start() resolves even when the
//   list failed);
// - a staleness watchdog: no list, established watch or event for `staleAfterMs` → a fresh
//   ListWatch is built (full relist); objects that vanished meanwhile are reported as deleted.
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { jitteredBackoffMs } from './backoff.ts';
import type { KubeClient } from './kube.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
    finalizers?: string[];
    deletionTimestamp?: string;
    creationTimestamp?: string;
    managedFields?: unknown;
  };
}

export interface InformerHandlers<T> {
  add?(obj: T): void;
  update?(obj: T, old: T | undefined): void;
  delete?(obj: T): void;
}

export interface InformerOptions {
  name: string;
  client: KubeClient;
  /** Collection path, e.g. /apis/apps/v1/namespaces/x/deployments. */
  path: string;
  labelSelector?: string;
  log: Logger;
  metrics?: Metrics;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  staleAfterMs?: number;
  /** Server-side watch timeout before jitter (client-go: minWatchTimeout 5 min, ×[1,2)). */
  watchTimeoutSeconds?: number;
  random?: () => number;
}

export function stripManagedFields<T extends { metadata?: { managedFields?: unknown } }>(obj: T): T {
  if (obj?.metadata) delete obj.metadata.managedFields;
  return obj;
}

type WatchCallback = (phase: string, apiObj: KubernetesObject, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/** Watch with bookmarks, a jittered timeout and managedFields stripped before ListWatch caches the object. */
class TunedWatch extends Watch {
  readonly #timeoutSeconds: () => number;
  readonly #onActivity: () => void;
  constructor(kc: KubeConfig, timeoutSeconds: () => number, onActivity: () => void) {
    super(kc);
    this.#timeoutSeconds = timeoutSeconds;
    this.#onActivity = onActivity;
  }

  override async watch(path: string, queryParams: Record<string, unknown>, callback: WatchCallback, done: DoneCallback): Promise<AbortController> {
    let failed = false;
    const params = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.#timeoutSeconds() };
    const controller = await super.watch(
      path,
      params,
      (phase, obj, raw) => {
        this.#onActivity();
        callback(phase, stripManagedFields(obj as KubeObject) as KubernetesObject, raw);
      },
      (err: unknown) => {
        if (err) failed = true;
        done(err);
      },
    );
    if (!failed) this.#onActivity(); // the watch is established (200 and streaming)
    return controller;
  }
}

export class Informer<T extends KubeObject> {
  readonly name: string;
  readonly #opts: InformerOptions;
  readonly #handlers: Array<InformerHandlers<T>> = [];
  readonly #random: () => number;
  #lw: ListWatch<KubernetesObject & T> | undefined;
  /** Reads go to the last ListWatch that listed successfully (a rebuilt one takes over once synced). */
  #cacheLw: ListWatch<KubernetesObject & T> | undefined;
  #stopped = true;
  #synced = false;
  #failures = 0;
  /** Errors seen since start (never reset, unlike #failures): a restart that met none resumed. */
  #errors = 0;
  #lastActivity = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #syncWaiters: Array<() => void> = [];

  constructor(opts: InformerOptions) {
    this.name = opts.name;
    this.#opts = opts;
    this.#random = opts.random ?? Math.random;
  }

  /** Handlers are plain, synchronous and O(1) (enqueue a key); they get the cached object: do not mutate it. */
  addHandlers(h: InformerHandlers<T>): void {
    this.#handlers.push(h);
  }

  get synced(): boolean {
    return this.#synced;
  }

  get(namespace: string, name: string): T | undefined {
    return this.#cacheLw?.get(name, namespace) as T | undefined;
  }

  list(namespace?: string): T[] {
    return (this.#cacheLw?.list(namespace) ?? []) as T[];
  }

  /** Starts listing and watching; resolves after the first attempt (check `synced` / waitForSync). */
  async start(): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    const staleAfter = this.#opts.staleAfterMs ?? 300_000;
    this.#watchdog = setInterval(() => this.#checkStale(staleAfter), Math.max(1000, staleAfter / 4));
    this.#watchdog.unref();
    await this.#run(this.#build());
  }

  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  /** Stops for good; pending waitForSync() callers are released (check `synced`). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    clearInterval(this.#watchdog);
    for (const w of this.#syncWaiters.splice(0)) w();
    await this.#lw?.stop(); // emits an AbortError, ignored because #stopped
  }

  #build(): ListWatch<KubernetesObject & T> {
    const { client, path, labelSelector } = this.#opts;
    const minTimeout = this.#opts.watchTimeoutSeconds ?? 300;
    const watch = new TunedWatch(client.kc, () => Math.floor(minTimeout * (1 + this.#random())), () => this.#touch());
    const listFn = async (): Promise<KubernetesListObject<KubernetesObject & T>> => {
      const list = await client.list<T>(path, { labelSelector });
      list.items.forEach(stripManagedFields);
      this.#touch();
      return list as unknown as KubernetesListObject<KubernetesObject & T>;
    };
    const lw = new ListWatch<KubernetesObject & T>(path, watch, listFn, false, labelSelector);
    const current = () => lw === this.#lw && !this.#stopped;
    lw.on('add', (obj) => current() && this.#emit('add', obj));
    lw.on('update', (obj) => current() && this.#emit('update', obj));
    lw.on('delete', (obj) => current() && this.#emit('delete', obj));
    lw.on('error', (err) => current() && this.#onError(lw, err));
    this.#lw = lw;
    this.#cacheLw ??= lw;
    return lw;
  }

  async #run(lw: ListWatch<KubernetesObject & T>): Promise<void> {
    await lw.start();
    if (lw !== this.#lw || this.#stopped) return;
    // start() resolves even when the list failed: only a successful list sets a resourceVersion.
    if (!lw.latestResourceVersion()) return;
    this.#cacheLw = lw;
    if (!this.#synced) {
      this.#synced = true;
      this.#opts.metrics?.informerSynced.set({ informer: this.name }, 1);
      this.#opts.log.info('informer synced', { informer: this.name, objects: lw.list().length });
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  #emit(kind: 'add' | 'update' | 'delete', obj: T): void {
    for (const h of this.#handlers) {
      try {
        if (kind === 'update') h.update?.(obj, undefined);
        else h[kind]?.(obj);
      } catch (err) {
        this.#opts.log.error('informer handler failed', { informer: this.name, err });
      }
    }
  }

  #touch(): void {
    this.#lastActivity = performance.now();
    this.#failures = 0;
  }

  #onError(lw: ListWatch<KubernetesObject & T>, err: unknown): void {
    if (this.#stopped) return;
    this.#failures += 1;
    this.#errors += 1;
    const delay = jitteredBackoffMs(this.#failures - 1, this.#opts.backoffBaseMs ?? 1000, this.#opts.backoffMaxMs ?? 30_000, this.#random);
    this.#opts.metrics?.informerRestarts.inc({ informer: this.name, cause: 'error' });
    this.#opts.log.warn('informer error; restarting', { informer: this.name, err, delayMs: Math.round(delay), failures: this.#failures });
    clearTimeout(this.#restartTimer);
    this.#restartTimer = setTimeout(() => {
      if (this.#stopped || lw !== this.#lw) return;
      const errors = this.#errors;
      // Resumes from the last resourceVersion, or relists if there is none. Said when the watch is
      // back (no new error meanwhile), so a log shows each outage's end, not only its errors.
      void this.#run(lw).then(() => {
        if (!this.#stopped && lw === this.#lw && this.#errors === errors) this.#opts.log.info('informer resumed', { informer: this.name });
      });
    }, delay);
    this.#restartTimer.unref();
  }

  #checkStale(staleAfterMs: number): void {
    if (this.#stopped || performance.now() - this.#lastActivity < staleAfterMs) return;
    const old = this.#lw;
    const oldObjects = old?.list() ?? [];
    this.#opts.metrics?.informerRestarts.inc({ informer: this.name, cause: 'stale' });
    this.#opts.log.warn('informer stale; rebuilding with a full relist', { informer: this.name, staleAfterMs });
    this.#touch(); // give the new ListWatch a full period
    clearTimeout(this.#restartTimer);
    const fresh = this.#build();
    void old?.stop();
    void this.#run(fresh).then(() => {
      if (fresh !== this.#lw || !fresh.latestResourceVersion()) return;
      for (const o of oldObjects) {
        if (!fresh.get(o.metadata.name, o.metadata.namespace)) this.#emit('delete', o);
      }
    });
  }
}
