// Kubernetes Events (events.k8s.io/v1) about the objects a controller manages. Reconcilers
// call it on transitions only (a phase change, a child created). Before anything is sent, an
// EventCorrelator (client-go's: aggregation of similar events, de-duplication, a spam filter per
// object, event-correlator.ts) decides whether and what to send, so a retry loop cannot flood the
// namespace. Events go through their own client with their own rate limit (controller/main.ts:
// EVENT_QPS / EVENT_BURST), never the reconcilers' write budget, so they never delay a reconcile
// write; at most `maxPending` wait for a token, later ones are dropped (counted in the log at
// debug). Failing to record an event never fails a reconcile.
import { errorMessage } from './errors.ts';
import type { KubeObject } from './informer.ts';
import { paths, type KubeClient } from './kube.ts';
import { microTime } from './leader.ts';
import type { Logger } from './log.ts';
import { EventCorrelator, type CorrelatorOptions } from './event-correlator.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(obj: KubeObject & { apiVersion: string; kind: string }, type: EventType, reason: string, note: string, action?: string): void;
}

export interface RecorderOptions {
  /** A client of its own: its rate limiter is the events' budget, apart from reconcile writes. */
  client: KubeClient;
  controller: string;
  instance: string;
  log: Logger;
  dedupWindowMs?: number;
  maxEntries?: number;
  now?: () => number;
  /** The rest of the correlator's knobs (client-go's defaults otherwise). */
  correlator?: Omit<CorrelatorOptions, 'now' | 'dedupWindowMs' | 'maxEntries'>;
  /** Events waiting for the client (its rate limit) beyond this are dropped (default 1000). */
  maxPending?: number;
}

export class KubeEventRecorder implements EventRecorder {
  readonly #o: RecorderOptions;
  readonly #correlator: EventCorrelator;
  readonly #pending = new Set<Promise<void>>();

  constructor(o: RecorderOptions) {
    this.#o = o;
    this.#correlator = new EventCorrelator({ ...o.correlator, now: o.now, dedupWindowMs: o.dedupWindowMs, maxEntries: o.maxEntries });
  }

  record(obj: KubeObject & { apiVersion: string; kind: string }, type: EventType, reason: string, rawNote: string, action = reason): void {
    const now = (this.#o.now ?? Date.now)();
    const decision = this.#correlator.decide(obj.metadata.uid ?? `${obj.kind}/${obj.metadata.namespace}/${obj.metadata.name}`, type, reason, rawNote);
    if (!decision.send) return;
    if (this.#pending.size >= (this.#o.maxPending ?? 1000)) {
      this.#o.log.debug('event dropped: too many waiting for the events rate limit', { reason });
      return;
    }
    const note = decision.note;

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
