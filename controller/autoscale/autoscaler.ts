// The autoscaler loop, on the leader: every tick, for each ModelService with spec.autoscale (from
// the shared informer cache), read its ready pods' load (scrape.ts), decide (decide.ts, pure), and
// carry a change through the ledger (ledger/autoscale-change.ts): a scale-up is charged there
// BEFORE anything in the cluster changes — the ledger controller applies it to the ModelService
// from the outbox `scale` row, as for a tenant's PATCH — and a scale-down is refunded once its
// surplus pods are gone. What it decided, and why, is written for the tenant only when it changed
// (reservation.autoscale_status). The memory of each admission (its load window, panic state,
// recent changes) lives in this process: a new leader starts empty, so it never scales down
// before it has seen a whole stable window (decide.ts).
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import type { AutoscaleCondition, AutoscaleConditionType, AutoscaleDecision, AutoscaleStatus } from '../../schema/autoscale.ts';
import type { Shortfall } from '../../schema/api.ts';
import { canonicalJson } from '../../schema/canonical-json.ts';
import { autoscaleChange, readAutoscaleStatus, writeAutoscaleStatus, type AutoscaleChangeInput, type AutoscaleChangeResult } from '../../ledger/autoscale-change.ts';
import type { Db } from '../../ledger/db.ts';
import type { KubeObject } from '../runtime/informer.ts';
import type { Logger } from '../runtime/log.ts';
import { decide, emptyMemory, recordChange, type AutoscaleMemory, type Observation } from './decide.ts';
import type { AutoscaleMetrics } from './metrics.ts';
import { podTargets, type PodLoad, type PodTarget, type ScrapedPod } from './scrape.ts';
import type { Placer } from '../../ledger/placement.ts';

/** The autoscaler's ledger calls (ledger/autoscale-change.ts, bound to the ledger's Db in setup). */
export interface AutoscaleLedger {
  change(input: AutoscaleChangeInput): Promise<AutoscaleChangeResult>;
  writeStatus(a: { tenant: string; id: string; epoch: number; status: AutoscaleStatus }): Promise<boolean>;
  readStatus(tenant: string, id: string): Promise<AutoscaleStatus | null>;
}

export const autoscaleLedger = (db: Db, placer: Placer): AutoscaleLedger => ({
  change: (input) => autoscaleChange(db, input, placer),
  writeStatus: (a) => writeAutoscaleStatus(db, a),
  readStatus: (tenant, id) => readAutoscaleStatus(db, tenant, id),
});

export interface AutoscalerDeps {
  ledger: AutoscaleLedger;
  /** The ModelServices of the cache (the informer's list). */
  modelServices: () => ReadonlyArray<ModelService & KubeObject>;
  /** The cached pods of a namespace. */
  pods: (namespace: string) => ReadonlyArray<ScrapedPod & { metadata: { labels?: Record<string, string> } }>;
  /** Reads the targets' load (scrape.ts scrapePods with its options bound). */
  scrape: (targets: readonly PodTarget[], signal: AbortSignal) => Promise<PodLoad[]>;
  /** The leader's epoch, once the tenant's fence holds it. */
  epochFor: (tenant: string) => Promise<number>;
  now: () => number;
  metrics: AutoscaleMetrics;
  log: Logger;
  /** Admissions worked on at once (each scrapes its pods with the scrape's own bound). */
  concurrency?: number;
}

interface Tracked {
  memory: AutoscaleMemory;
  lastDecision: AutoscaleDecision | null;
  /** `cluster`: the room of the admission's cluster, not the quota, bounded the grant. */
  quotaLimited: { short: Shortfall[]; since: string; wanted: number; cluster: string | null } | null;
  conditionsSince: Partial<Record<AutoscaleConditionType, string>>;
  /** The status last written (canonical JSON of its shown part), to write only on change. */
  written: string | null;
  /** The replicas of a change this process committed, until the ModelService carries them. */
  appliedTo: number | null;
}

export class Autoscaler {
  readonly #d: AutoscalerDeps;
  readonly #tracked = new Map<string, Tracked>();

  constructor(deps: AutoscalerDeps) {
    this.#d = deps;
  }

  /** One pass over every autoscaled ModelService. */
  async tick(signal: AbortSignal): Promise<void> {
    const list = this.#d.modelServices().filter((ms) => ms.spec?.autoscale && !ms.metadata.deletionTimestamp && ms.metadata.labels?.[LABELS.admissionId]);
    const live = new Set(list.map(keyOf));
    for (const key of this.#tracked.keys()) if (!live.has(key)) this.#tracked.delete(key);
    let next = 0;
    const worker = async () => {
      while (next < list.length && !signal.aborted) {
        const ms = list[next++]!;
        try {
          await this.#one(ms, signal);
        } catch (err) {
          if (signal.aborted) return;
          this.#d.metrics.errors.inc();
          this.#d.log.warn('autoscale step failed', { key: keyOf(ms), err: err instanceof Error ? err.message : String(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#d.concurrency ?? 8, list.length) }, worker));
    const tracked = [...this.#tracked.values()];
    this.#d.metrics.panicking.set(tracked.filter((t) => t.conditionsSince.Panic).length);
    this.#d.metrics.metricsUnavailable.set(tracked.filter((t) => t.conditionsSince.MetricsUnavailable).length);
  }

  async #one(ms: ModelService & KubeObject, signal: AbortSignal): Promise<void> {
    const spec = ms.spec!.autoscale!;
    const key = keyOf(ms);
    const id = ms.metadata.labels![LABELS.admissionId]!;
    const tenant = ms.metadata.labels?.[LABELS.tenant];
    if (!tenant) return;
    const t = this.#tracked.get(key) ?? (await this.#track(tenant, id));
    this.#tracked.set(key, t);
    const now = this.#d.now();
    const current = ms.spec!.replicas;
    const { observation, ready } = await this.#observe(ms, id, signal);
    const d = decide({ now, spec, current, observation, memory: t.memory });
    t.memory = d.memory;
    this.#d.metrics.decisions.inc({ reason: d.reason });
    const at = new Date(now);
    // A change committed but not on the ModelService yet is still in flight: no transaction for it.
    if (t.appliedTo !== null && t.appliedTo === current) t.appliedTo = null;
    if (d.replicas !== current && t.appliedTo === null) {
      const res = await this.#d.ledger.change({ tenant, id, epoch: await this.#d.epochFor(tenant), want: d.replicas, now: at });
      // Every ledger transaction counts toward maxChangesPerMinute, not only the committed ones: a
      // QuotaLimited admission retries at that pace, never once per tick.
      t.memory = recordChange(t.memory, now);
      if (res.outcome === 'changed') {
        t.appliedTo = res.to;
        t.lastDecision = { at: at.toISOString(), fromReplicas: res.from, toReplicas: res.to, desiredReplicas: d.replicas, reason: `${d.reason}: ${d.message}` };
        t.quotaLimited = res.short.length > 0 || res.cluster ? { short: res.short, since: t.quotaLimited?.since ?? at.toISOString(), wanted: d.replicas, cluster: res.cluster } : null;
        this.#d.metrics.changes.inc({ direction: res.to > res.from ? 'up' : 'down', grant: res.short.length > 0 || res.cluster ? 'partial' : 'full' });
        this.#d.log.info('autoscale change committed to the ledger', { key, admissionId: id, from: res.from, to: res.to, desired: d.replicas, reason: d.reason, short: res.short });
      } else if (res.outcome === 'quota-limited') {
        t.quotaLimited = { short: res.short, since: t.quotaLimited?.since ?? at.toISOString(), wanted: d.replicas, cluster: res.cluster };
        this.#d.metrics.quotaRefusals.inc();
      }
    } else if (t.quotaLimited && d.desired !== null && d.desired <= current) {
      t.quotaLimited = null; // the load no longer asks for more than the quota gave (a tick without a reading says nothing of it)
    }
    await this.#writeStatus(t, { tenant, id, key }, d, observation, ready, at);
  }

  /** A newly seen admission: its last decision and conditions as the previous leader (or this one, before a restart) left them. */
  async #track(tenant: string, id: string): Promise<Tracked> {
    const stored = await this.#d.ledger.readStatus(tenant, id);
    return {
      memory: emptyMemory(),
      lastDecision: stored?.lastDecision ?? null,
      quotaLimited: null,
      conditionsSince: Object.fromEntries((stored?.conditions ?? []).map((c) => [c.type, c.since])),
      written: null,
      appliedTo: null,
    };
  }

  /** The admission's load from its ready pods (and how many are ready). */
  async #observe(ms: ModelService & KubeObject, id: string, signal: AbortSignal): Promise<{ observation: Observation; ready: number }> {
    const ns = ms.metadata.namespace ?? '';
    const pods = this.#d.pods(ns).filter((p) => p.metadata.labels?.[LABELS.admissionId] === id);
    const { targets, ready } = podTargets(pods, ms.spec!.port);
    const unavailable = (reason: string) => ({ observation: { kind: 'unavailable', reason } as const, ready });
    if (ready === 0) return unavailable('no ready pod to read the load from');
    if (targets.length < ready) return unavailable(`${ready - targets.length} ready pod(s) have no address yet`);
    const loads = await this.#d.scrape(targets, signal);
    const failed = loads.filter((l) => !l.ok);
    if (failed.length > 0) {
      this.#d.metrics.scrapeErrors.inc(failed.length);
      return unavailable(failed.map((f) => `${f.pod}: ${f.ok ? '' : f.error}`).join('; '));
    }
    const total = loads.reduce((sum, l) => sum + (l.ok ? l.waiting + l.busy : 0), 0);
    return { observation: { kind: 'load', total, readyPods: ready }, ready };
  }

  async #writeStatus(t: Tracked, k: { tenant: string; id: string; key: string }, d: ReturnType<typeof decide>, observation: Observation, ready: number, at: Date): Promise<void> {
    const wanted: Array<{ type: AutoscaleConditionType; reason: string; message: string }> = [];
    if (t.quotaLimited?.cluster && t.quotaLimited.short.length === 0) {
      wanted.push({ type: 'QuotaLimited', reason: 'ClusterFull', message: `the load asks for ${t.quotaLimited.wanted} replicas; cluster ${t.quotaLimited.cluster}, where this admission runs, has no room for more` });
    } else if (t.quotaLimited) {
      const short = t.quotaLimited.short.map((s) => `${s.resource} ${s.requested} requested, ${s.available} available`).join('; ');
      wanted.push({ type: 'QuotaLimited', reason: 'QuotaShort', message: `the load asks for ${t.quotaLimited.wanted} replicas; the quota is short: ${short || 'admissions of this tenant are queued'}` });
    }
    if (observation.kind === 'unavailable') wanted.push({ type: 'MetricsUnavailable', reason: d.reason === 'metrics-fallback' ? 'Fallback' : 'Holding', message: observation.reason });
    if (d.panic) wanted.push({ type: 'Panic', reason: 'LoadBurst', message: d.message });
    const since: Tracked['conditionsSince'] = {};
    const conditions: AutoscaleCondition[] = wanted.map((c) => {
      since[c.type] = t.conditionsSince[c.type] ?? at.toISOString();
      return { ...c, since: since[c.type]! };
    });
    t.conditionsSince = since;
    const status: AutoscaleStatus = { desiredReplicas: d.desired, readyReplicas: ready, load: d.load, panic: d.panic, lastDecision: t.lastDecision, conditions, observedAt: at.toISOString() };
    // Written when what it says changed — not for every new load reading or timestamp.
    const shown = canonicalJson({ ...status, load: null, observedAt: null, conditions: conditions.map((c) => ({ ...c, message: c.type === 'Panic' ? '' : c.message })) });
    if (shown === t.written) return;
    if (await this.#d.ledger.writeStatus({ tenant: k.tenant, id: k.id, epoch: await this.#d.epochFor(k.tenant), status })) t.written = shown;
  }
}

const keyOf = (ms: KubeObject): string => `${ms.metadata.namespace}/${ms.metadata.name}`;
