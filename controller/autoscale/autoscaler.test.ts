// The autoscaler loop (autoscaler.ts) with every dependency faked: the informer cache (ModelServices
// and pods), the pods' load (scrape), the ledger (a recorder answering scripted results), the
// leader's epochs and the clock. decide() is the real one (table-tested in decide.test.ts); the
// spec here never panics (panicThreshold 10) and is not rate-limited unless a test says so.
import { Registry } from 'prom-client';
import { afterEach, describe, expect, test } from 'vitest';
import type { AutoscaleChangeInput, AutoscaleChangeResult } from '../../ledger/autoscale-change.ts';
import type { Shortfall } from '../../schema/api.ts';
import { autoscaleSpecSchema, type AutoscaleSpec, type AutoscaleStatus } from '../../schema/autoscale.ts';
import { API_VERSION, KIND, LABELS, type ModelService } from '../../schema/model-service.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { createLogger, silentLogger, type Logger } from '../runtime/log.ts';
import { Autoscaler, type AutoscaleLedger, type AutoscalerDeps } from './autoscaler.ts';
import { autoscaleMetrics, type AutoscaleMetrics } from './metrics.ts';
import type { PodLoad, PodTarget, ScrapedPod } from './scrape.ts';

const NS = 'tenant-t1';
const T0 = Date.parse('2025-03-01T12:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const EPOCHS: Record<string, number> = { t1: 7, t2: 9 };
const TICK_MS = 2000;

/** Target 10 per replica, 1..10 replicas; no panic, no rate limit unless overridden. */
const autoscale = (over: Partial<AutoscaleSpec> = {}): AutoscaleSpec =>
  autoscaleSpecSchema(16).parse({ minReplicas: 1, maxReplicas: 10, targetQueuePerReplica: 10, panicThreshold: 10, maxChangesPerMinute: 60, ...over });

type Cached = ModelService & KubeObject;
interface MsOptions {
  replicas?: number;
  tenant?: string;
  /** The admission id label (null: no label). */
  id?: string | null;
  /** null: not autoscaled. */
  autoscale?: AutoscaleSpec | null;
  deleting?: boolean;
}
/** A cached ModelService `name` as the admission path labels it (admission `adm-<name>` of tenant t1). */
function modelService(name: string, o: MsOptions = {}): Cached {
  const id = o.id === undefined ? `adm-${name}` : o.id;
  const labels: Record<string, string> = { [LABELS.tenant]: o.tenant ?? 't1', ...(id === null ? {} : { [LABELS.admissionId]: id }) };
  const spec: ModelService['spec'] = { image: 'example.invalid/model:1', replicas: o.replicas ?? 1, port: 8000, resources: { cpu: '1', memory: '1Gi' }, env: [], args: [], readinessPath: '/healthz' };
  if (o.autoscale !== null) spec.autoscale = o.autoscale ?? autoscale();
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace: NS, labels, ...(o.deleting ? { deletionTimestamp: iso(T0 - 1000) } : {}) }, spec };
}

/** A pod's part in a scenario: its load, its failed scrape, or not Ready. */
type PodCase = { waiting: number; busy: number } | { error: string } | 'not-ready';
const load = (waiting: number, busy = 0): PodCase => ({ waiting, busy });
type Pod = ScrapedPod & { metadata: { labels?: Record<string, string> } };

/** The ledger: records every call; `change` answers what the test scripted for the admission, in order. */
class FakeLedger implements AutoscaleLedger {
  readonly changes: AutoscaleChangeInput[] = [];
  readonly writes: Array<{ tenant: string; id: string; epoch: number; status: AutoscaleStatus }> = [];
  readonly reads: string[] = [];
  /** What readStatus answers: the last status written for each admission. */
  readonly stored = new Map<string, AutoscaleStatus>();
  /** Calls of `change` nobody scripted (each test must end with none). */
  readonly unscripted: AutoscaleChangeInput[] = [];
  readonly #script = new Map<string, Array<AutoscaleChangeResult | Error>>();

  script(id: string, ...results: Array<AutoscaleChangeResult | Error>): void {
    this.#script.set(id, [...(this.#script.get(id) ?? []), ...results]);
  }
  change = async (input: AutoscaleChangeInput): Promise<AutoscaleChangeResult> => {
    this.changes.push(input);
    const next = this.#script.get(input.id)?.shift();
    if (next === undefined) {
      this.unscripted.push(input);
      throw new Error(`unscripted ledger.change for ${input.id}`);
    }
    if (next instanceof Error) throw next;
    return next;
  };
  writeStatus = async (a: { tenant: string; id: string; epoch: number; status: AutoscaleStatus }): Promise<boolean> => {
    this.writes.push(structuredClone(a));
    this.stored.set(a.id, structuredClone(a.status));
    return true;
  };
  readStatus = async (tenant: string, id: string): Promise<AutoscaleStatus | null> => {
    this.reads.push(`${tenant}/${id}`);
    return structuredClone(this.stored.get(id) ?? null);
  };
  /** The statuses written for `id`, oldest first. */
  written(id: string): AutoscaleStatus[] {
    return this.writes.filter((w) => w.id === id).map((w) => w.status);
  }
}

const changed = (from: number, to: number, short: Shortfall[] = []): AutoscaleChangeResult => ({ outcome: 'changed', from, to, generation: 2, short, cluster: null });
const gpuShort = (requested: number, available: number): Shortfall => ({ resource: 'nvidia.com/gpu', requested, available, short: requested - available });

const ledgers: FakeLedger[] = [];
afterEach(() => {
  for (const ledger of ledgers.splice(0)) expect(ledger.unscripted).toEqual([]);
});

function harness(o: { concurrency?: number; log?: Logger } = {}) {
  const ledger = new FakeLedger();
  ledgers.push(ledger);
  const metrics = autoscaleMetrics(new Registry());
  const cache = new Map<string, { ms: Cached; pods: Pod[]; loads: Map<string, PodLoad> }>();
  const scrapes: PodTarget[][] = [];
  let now = T0;
  const deps: AutoscalerDeps = {
    ledger,
    modelServices: () => [...cache.values()].map((e) => e.ms),
    pods: (ns) => [...cache.values()].filter((e) => e.ms.metadata.namespace === ns).flatMap((e) => e.pods),
    scrape: async (targets) => {
      scrapes.push([...targets]);
      const loads = new Map([...cache.values()].flatMap((e) => [...e.loads]));
      return targets.map((t) => loads.get(t.name) ?? { pod: t.name, ok: false, error: 'scraped a pod the test does not know' });
    },
    epochFor: async (tenant) => EPOCHS[tenant] ?? 0,
    now: () => now,
    metrics,
    log: o.log ?? silentLogger,
    ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
  };
  let autoscaler = new Autoscaler(deps);
  const h = {
    ledger,
    metrics,
    scrapes,
    /** Puts (or replaces) a ModelService in the cache with its pods `<name>-0`, `<name>-1`, … */
    put(ms: Cached, ...pods: PodCase[]): void {
      const id = ms.metadata.labels?.[LABELS.admissionId] ?? 'none';
      const entry = { ms, pods: [] as Pod[], loads: new Map<string, PodLoad>() };
      pods.forEach((p, i) => {
        const name = `${ms.metadata.name}-${i}`;
        const ready = p === 'not-ready' ? 'False' : 'True';
        entry.pods.push({ metadata: { name, labels: { [LABELS.admissionId]: id } }, status: { podIP: `10.0.${cache.size}.${i + 1}`, conditions: [{ type: 'Ready', status: ready }] } });
        if (p !== 'not-ready') entry.loads.set(name, 'error' in p ? { pod: name, ok: false, error: p.error } : { pod: name, ok: true, ...p });
      });
      cache.set(ms.metadata.name, entry);
    },
    remove(name: string): void {
      cache.delete(name);
    },
    /** One tick at the current time; the clock then moves on by one tick. */
    async tick(): Promise<void> {
      await autoscaler.tick(new AbortController().signal);
      now += TICK_MS;
    },
    wait(ms: number): void {
      now += ms;
    },
    /** Another process takes the lease: a new Autoscaler with the same deps (and an empty memory). */
    newLeader(): void {
      autoscaler = new Autoscaler(deps);
    },
  };
  return h;
}

type Metric = AutoscaleMetrics[keyof AutoscaleMetrics];
async function value(m: Metric, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await m.get();
  return values.find((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))?.value ?? 0;
}

describe('Autoscaler.tick: a scale-up goes through the ledger, the status is written when it changed', () => {
  test('load above target: change(want > current, the leader epoch); the status shows the decision; an unchanged tick writes nothing', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 1 }), load(10, 5)); // 15 for target 10: 2 replicas
    h.ledger.script('adm-a', changed(1, 2));
    await h.tick();

    expect(h.ledger.changes).toEqual([{ tenant: 't1', id: 'adm-a', epoch: 7, want: 2, now: new Date(T0) }]);
    expect(h.ledger.writes.map((w) => [w.tenant, w.id, w.epoch])).toEqual([['t1', 'adm-a', 7]]);
    expect(h.ledger.written('adm-a')).toEqual([
      {
        desiredReplicas: 2,
        readyReplicas: 1,
        load: 15,
        panic: false,
        lastDecision: { at: iso(T0), fromReplicas: 1, toReplicas: 2, desiredReplicas: 2, reason: expect.stringMatching(/^scale-up: load 15 /) },
        conditions: [],
        observedAt: iso(T0),
      },
    ]);
    expect(await value(h.metrics.changes, { direction: 'up', grant: 'full' })).toBe(1);
    expect(await value(h.metrics.decisions, { reason: 'scale-up' })).toBe(1);

    // The ledger controller applied it: 2 replicas carry the same load. Nothing to change; the one
    // new thing to say is the second ready pod, said once.
    h.put(modelService('a', { replicas: 2 }), load(5, 3), load(5, 2));
    await h.tick();
    await h.tick();
    expect(h.ledger.changes).toHaveLength(1);
    expect(h.ledger.writes).toHaveLength(2);
    expect(h.ledger.written('adm-a').at(-1)).toMatchObject({ readyReplicas: 2, desiredReplicas: 2 });
    expect(h.scrapes).toHaveLength(3);
  });

  test('a partial grant, then a refusal: QuotaLimited names the shortfall, keeps its since, and clears once the load asks no more than the replicas', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 1 }), load(45)); // 5 replicas
    h.ledger.script('adm-a', changed(1, 3, [gpuShort(4, 2)]));
    await h.tick();
    const first = h.ledger.written('adm-a').at(-1)!;
    expect(first.lastDecision).toEqual({ at: iso(T0), fromReplicas: 1, toReplicas: 3, desiredReplicas: 5, reason: expect.stringMatching(/^scale-up: /) });
    expect(first.conditions).toEqual([
      { type: 'QuotaLimited', reason: 'QuotaShort', message: 'the load asks for 5 replicas; the quota is short: nvidia.com/gpu 4 requested, 2 available', since: iso(T0) },
    ]);
    expect(await value(h.metrics.changes, { direction: 'up', grant: 'partial' })).toBe(1);

    // At 3 replicas the load still asks 5; the quota has nothing left.
    h.put(modelService('a', { replicas: 3 }), load(15), load(15), load(15));
    h.ledger.script('adm-a', { outcome: 'quota-limited', from: 3, short: [gpuShort(2, 0)], queued: 0, cluster: null });
    await h.tick();
    expect(h.ledger.changes.map((c) => c.want)).toEqual([5, 5]);
    const refused = h.ledger.written('adm-a').at(-1)!;
    expect(refused.lastDecision).toEqual(first.lastDecision);
    expect(refused.conditions).toEqual([
      { type: 'QuotaLimited', reason: 'QuotaShort', message: 'the load asks for 5 replicas; the quota is short: nvidia.com/gpu 2 requested, 0 available', since: iso(T0) },
    ]);
    expect(await value(h.metrics.quotaRefusals)).toBe(1);

    // A tick without a reading says nothing of the quota: QuotaLimited stays, beside MetricsUnavailable.
    h.put(modelService('a', { replicas: 3 }), load(15), { error: 'timeout' }, load(15));
    await h.tick();
    expect(h.ledger.written('adm-a').at(-1)!.conditions.map((c) => c.type)).toEqual(['QuotaLimited', 'MetricsUnavailable']);

    // A minute later the load asks 1: the replicas stay (no scale-down before a whole window), QuotaLimited goes.
    h.wait(60_000);
    h.put(modelService('a', { replicas: 3 }), load(2), load(2), load(2));
    const writes = h.ledger.writes.length;
    await h.tick();
    expect(h.ledger.changes).toHaveLength(2);
    expect(h.ledger.writes).toHaveLength(writes + 1);
    const cleared = h.ledger.written('adm-a').at(-1)!;
    expect(cleared).toMatchObject({ desiredReplicas: 1, conditions: [], lastDecision: first.lastDecision });
    expect(await value(h.metrics.quotaRefusals)).toBe(1);
  });

  test('a refusal with admissions queued (no shortfall) says so', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 1 }), load(30));
    h.ledger.script('adm-a', { outcome: 'quota-limited', from: 1, short: [], queued: 2, cluster: null });
    await h.tick();
    expect(h.ledger.written('adm-a')).toEqual([
      expect.objectContaining({
        desiredReplicas: 3,
        lastDecision: null,
        conditions: [{ type: 'QuotaLimited', reason: 'QuotaShort', message: 'the load asks for 3 replicas; the quota is short: admissions of this tenant are queued', since: iso(T0) }],
      }),
    ]);
    expect(await value(h.metrics.quotaRefusals)).toBe(1);
    expect(await value(h.metrics.changes, { direction: 'up', grant: 'full' })).toBe(0);
  });
});

describe('Autoscaler.tick: bounded by its cluster', () => {
  test('a grant the quota allows but the cluster has no room for shows QuotaLimited/ClusterFull naming the cluster', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 1 }), load(30));
    h.ledger.script('adm-a', { outcome: 'quota-limited', from: 1, short: [], queued: 0, cluster: 'c2' });
    await h.tick();
    expect(h.ledger.written('adm-a')).toEqual([
      expect.objectContaining({
        desiredReplicas: 3,
        conditions: [{ type: 'QuotaLimited', reason: 'ClusterFull', message: 'the load asks for 3 replicas; cluster c2, where this admission runs, has no room for more', since: iso(T0) }],
      }),
    ]);
    expect(await value(h.metrics.quotaRefusals)).toBe(1);
  });

  test('a partial grant bounded by the cluster counts as partial and says so', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 1 }), load(30));
    h.ledger.script('adm-a', { outcome: 'changed', from: 1, to: 2, generation: 2, short: [], cluster: 'c2' });
    await h.tick();
    expect(h.ledger.written('adm-a').at(-1)!.conditions).toEqual([expect.objectContaining({ type: 'QuotaLimited', reason: 'ClusterFull' })]);
    expect(await value(h.metrics.changes, { direction: 'up', grant: 'partial' })).toBe(1);
  });
});

describe('Autoscaler.tick: without a reading it holds', () => {
  test('one ready pod unreadable: no change, MetricsUnavailable with its error, the gauge at 1; readable again clears both', async () => {
    const h = harness();
    const error = 'GET http://10.0.0.2:8000/metrics: HTTP 500';
    h.put(modelService('a', { replicas: 2 }), load(30, 20), { error }); // the readable pod alone would ask 5
    await h.tick();
    expect(h.ledger.changes).toEqual([]);
    expect(h.scrapes).toEqual([[{ name: 'a-0', ip: '10.0.0.1', port: 8000 }, { name: 'a-1', ip: '10.0.0.2', port: 8000 }]]);
    expect(h.ledger.written('adm-a')).toEqual([
      { desiredReplicas: null, readyReplicas: 2, load: null, panic: false, lastDecision: null, conditions: [{ type: 'MetricsUnavailable', reason: 'Holding', message: `a-1: ${error}`, since: iso(T0) }], observedAt: iso(T0) },
    ]);
    expect(await value(h.metrics.metricsUnavailable)).toBe(1);
    expect(await value(h.metrics.scrapeErrors)).toBe(1);
    expect(await value(h.metrics.decisions, { reason: 'metrics-unavailable' })).toBe(1);

    h.put(modelService('a', { replicas: 2 }), load(10, 10), load(0));
    await h.tick();
    expect(h.ledger.written('adm-a').at(-1)).toMatchObject({ desiredReplicas: 2, conditions: [] });
    expect(await value(h.metrics.metricsUnavailable)).toBe(0);
  });

  test('no ready pod: nothing scraped, MetricsUnavailable, the gauge at 1', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 2 }), 'not-ready', 'not-ready');
    await h.tick();
    expect(h.scrapes).toEqual([]);
    expect(h.ledger.changes).toEqual([]);
    expect(h.ledger.written('adm-a').at(-1)?.conditions).toEqual([
      { type: 'MetricsUnavailable', reason: 'Holding', message: 'no ready pod to read the load from', since: iso(T0) },
    ]);
    expect(await value(h.metrics.metricsUnavailable)).toBe(1);
  });
});

describe('Autoscaler.tick: what it works on', () => {
  test('a ModelService not autoscaled, being deleted or without an admission id is not touched', async () => {
    const h = harness();
    h.put(modelService('plain', { autoscale: null }), load(100));
    h.put(modelService('gone', { deleting: true }), load(100));
    h.put(modelService('stray', { id: null }), load(100));
    h.put(modelService('auto'), load(30));
    h.ledger.script('adm-auto', changed(1, 3));
    await h.tick();
    expect(h.scrapes.flat().map((t) => t.name)).toEqual(['auto-0']);
    expect(h.ledger.reads).toEqual(['t1/adm-auto']);
    expect(h.ledger.changes.map((c) => c.id)).toEqual(['adm-auto']);
    expect(h.ledger.writes.map((w) => w.id)).toEqual(['adm-auto']);
  });

  test('a new leader keeps the stored last decision and the since of a condition still true', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 1 }), load(30));
    h.ledger.script('adm-a', changed(1, 3));
    await h.tick();
    const timeout = { error: 'GET http://10.0.0.1:8000/metrics: timed out after 1000 ms' };
    h.put(modelService('a', { replicas: 3 }), timeout, load(10), load(10));
    await h.tick(); // unreadable since T0 + 1 tick
    const before = h.ledger.written('adm-a').at(-1)!;
    expect(before.conditions.map((c) => [c.type, c.since])).toEqual([['MetricsUnavailable', iso(T0 + TICK_MS)]]);

    h.newLeader();
    await h.tick();
    expect(h.ledger.reads).toEqual(['t1/adm-a', 't1/adm-a']);
    expect(h.ledger.writes.map((w) => w.epoch)).toEqual([7, 7, 7]);
    const after = h.ledger.written('adm-a').at(-1)!;
    expect(after.lastDecision).toEqual({ at: iso(T0), fromReplicas: 1, toReplicas: 3, desiredReplicas: 3, reason: expect.stringMatching(/^scale-up: /) });
    expect(after.conditions).toEqual([{ type: 'MetricsUnavailable', reason: 'Holding', message: `a-0: ${timeout.error}`, since: iso(T0 + TICK_MS) }]);
    expect(after.observedAt).toBe(iso(T0 + 2 * TICK_MS));
  });

  test('a ledger that throws fails that admission only: the tick resolves, errors +1, the next admission is handled, the failed one retried next tick', async () => {
    const lines: string[] = [];
    const h = harness({ concurrency: 1, log: createLogger({ write: (l) => lines.push(l) }) });
    h.put(modelService('a', { tenant: 't1' }), load(30));
    h.put(modelService('b', { tenant: 't2' }), load(20));
    h.ledger.script('adm-a', new Error('ledger unreachable'));
    h.ledger.script('adm-b', changed(1, 2));
    await expect(h.tick()).resolves.toBeUndefined();
    expect(h.ledger.changes.map((c) => [c.id, c.epoch, c.want])).toEqual([
      ['adm-a', 7, 3],
      ['adm-b', 9, 2],
    ]);
    expect(h.ledger.writes.map((w) => [w.id, w.epoch])).toEqual([['adm-b', 9]]);
    expect(await value(h.metrics.errors)).toBe(1);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'autoscale step failed', key: `${NS}/a`, err: 'ledger unreachable' }),
    );

    h.ledger.script('adm-a', changed(1, 3));
    h.put(modelService('b', { tenant: 't2', replicas: 2 }), load(10), load(10));
    await h.tick();
    expect(h.ledger.changes.map((c) => c.id)).toEqual(['adm-a', 'adm-b', 'adm-a']);
    expect(h.ledger.written('adm-a').at(-1)?.lastDecision).toMatchObject({ fromReplicas: 1, toReplicas: 3 });
    expect(await value(h.metrics.errors)).toBe(1);
  });

  test.each([
    ['1 a minute, skipped (change pending): every ledger transaction counts, the next tick is rate-limited', 1, { outcome: 'skipped', reason: 'change-pending' } as const, 1, null],
    ['60 a minute, skipped (change pending): asked again next tick', 60, { outcome: 'skipped', reason: 'change-pending' } as const, 2, null],
    ['1 a minute, changed: the next tick is rate-limited', 1, changed(1, 2), 1, { fromReplicas: 1, toReplicas: 2 }],
    ['60 a minute, changed: not asked again while the ModelService does not carry it yet', 60, changed(1, 2), 1, { fromReplicas: 1, toReplicas: 2 }],
  ])('with %s', async (_, maxChangesPerMinute, result, calls, lastDecision) => {
    const h = harness();
    h.put(modelService('a', { replicas: 1, autoscale: autoscale({ maxChangesPerMinute }) }), load(20)); // asks 2; the cache stays at 1
    h.ledger.script('adm-a', result, { outcome: 'skipped', reason: 'change-pending' });
    await h.tick();
    await h.tick();
    expect(h.ledger.changes.map((c) => c.want)).toEqual(Array(calls).fill(2));
    expect(h.ledger.written('adm-a').at(-1)?.lastDecision ?? null).toEqual(lastDecision === null ? null : expect.objectContaining(lastDecision));
    expect(await value(h.metrics.errors)).toBe(0);
    expect(await value(h.metrics.changes, { direction: 'up', grant: 'full' })).toBe(lastDecision === null ? 0 : 1);
  });

  test('a ModelService gone from the cache is forgotten: one of the same name starts again from readStatus', async () => {
    const h = harness();
    h.put(modelService('a', { replicas: 2 }), load(10), load(10));
    await h.tick();
    await h.tick();
    expect(h.ledger.reads).toEqual(['t1/adm-a']);
    expect(h.ledger.writes).toHaveLength(1);

    h.remove('a');
    await h.tick();
    expect(h.ledger.reads).toHaveLength(1);
    expect(h.scrapes).toHaveLength(2);

    h.put(modelService('a', { replicas: 2 }), load(10), load(10));
    await h.tick();
    expect(h.ledger.reads).toEqual(['t1/adm-a', 't1/adm-a']);
    expect(h.ledger.writes).toHaveLength(2); // its status is written afresh, though it says the same
  });
});
