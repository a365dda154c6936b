// Kubernetes Events (events.k8s.io/v1) about the objects a controller manages. Reconcilers
// call it on transitions only (a phase change, a child created); the recorder also drops a
// repeat of the same (object, type, reason, note) within `dedupWindowMs`, so a retry loop
// cannot flood the namespace. Failing to record an event never fails a reconcile.
import { errorMessage } from './errors.ts';
import type { KubeObject } from './informer.ts';
import { paths, type KubeClient } from './kube.ts';
import { microTime } from './leader.ts';
import type { Logger } from './log.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(obj: KubeObject & { apiVersion: string; kind: string }, type: EventType, reason: string, note: string, action?: string): void;
}

export interface RecorderOptions {
  client: KubeClient;
  controller: string;
  instance: string;
  log: Logger;
  dedupWindowMs?: number;
  maxEntries?: number;
  now?: () => number;
}

export class KubeEventRecorder implements EventRecorder {
  readonly #o: RecorderOptions;
  readonly #seen = new Map<string, number>();
  readonly #pending = new Set<Promise<void>>();

  constructor(o: RecorderOptions) {
    this.#o = o;
  }

  record(obj: KubeObject & { apiVersion: string; kind: string }, type: EventType, reason: string, note: string, action = reason): void {
    const now = (this.#o.now ?? Date.now)();
    const id = `${obj.metadata.uid}|${type}|${reason}|${note}`;
    const last = this.#seen.get(id);
    if (last !== undefined && now - last < (this.#o.dedupWindowMs ?? 600_000)) return;
    this.#seen.delete(id);
    this.#seen.set(id, now);
    if (this.#seen.size > (this.#o.maxEntries ?? 4096)) this.#seen.delete(this.#seen.keys().next().value as string);

    const ns = obj.metadata.namespace ?? 'default';
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // client-go's naming: <object>.<unix nanos in hex>, plus randomness against same-millisecond events
      metadata: { name: `${obj.metadata.name}.${(now * 1e6).toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`, namespace: ns },
      eventTime: microTime(new Date(now)),
      reportingController: this.#o.controller,
      reportingInstance: this.#o.instance,
      action: action.slice(0, 128),
      reason: reason.slice(0, 128),
      note: note.slice(0, 1024),
      type,
      regarding: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: ns,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
    };
    const p = this.#o.client
      .create(paths.events(ns), body)
      .then(() => undefined)
      .catch((err: unknown) => this.#o.log.warn('could not record event', { reason, err: errorMessage(err) }))
      .finally(() => this.#pending.delete(p));
    this.#pending.add(p);
  }

  /** Waits for in-flight event writes (graceful shutdown, tests). */
  async flush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }
}
