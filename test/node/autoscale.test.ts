// Autoscaling on real containers: the mock model runs on the stack's real node, a load generator
// keeps N streamed completions in flight through the Service's ClusterIP (kube-proxy), the
// controller reads each ready pod's /metrics over the pod network and scales through the ledger.
//  - ramp: load 50 at a target of 10 per replica asks 5; the quota has room for +3 over 1, so the
//    replicas stop at exactly 4 with QuotaLimited shown; every replicas value the Deployment ever
//    had was charged before a watch saw it, and before its write reached the API server (audit log);
//  - sawtooth: 5 minutes of load going 0 ↔ 30, sampled every 200 ms: never more pods (Terminating
//    ones included) than charged replicas;
//  - refund after Terminating: pods held Terminating 20 s (the mock's MOCK_SHUTDOWN_DELAY_S); the
//    scale-down's refund comes after the last surplus pod object was seen, exactly once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AUDIT_LOG } from '../../scripts/testenv/kube.ts';
import { Watch } from '@kubernetes/client-node';
import { mockAdmission, podsOf, useNodeSystem } from '../support/real-node.ts';
import { waitFor } from '../support/wait.ts';
import type { ApiBody } from '../support/tenant-api.ts';
import { kubeConfig } from '../support/kube.ts';
import { time } from '../../ledger/columns.ts';

// cpu 1000m = 4 replicas of 250m (the modelservices count is separate).
const system = useNodeSystem({ quota: ['cpu=1', 'memory=2Gi', 'modelservices=5'], controllerEnv: { AUTOSCALE_TICK_MS: '1000' } });
const PER_REPLICA_CPU = 250;

/** The mock, slow enough that requests pile up: 2 slots, 200 ms per token, room for 100 queued. */
const slowMock = (over: Record<string, unknown> = {}) =>
  mockAdmission({ env: [{ name: 'TOKEN_DELAY_MS', value: '200' }, { name: 'QUEUE_LIMIT', value: '100' }], ...over });
const autoscale = (over: Record<string, unknown> = {}) => ({
  minReplicas: 1,
  maxReplicas: 8,
  targetQueuePerReplica: 10,
  stableWindowSeconds: 6,
  scaleDownStabilizationSeconds: 6,
  maxChangesPerMinute: 30,
  ...over,
});

/** Keeps `target()` streamed completions in flight (closed loop): the admission's load is that number. */
function loadGenerator(base: string) {
  let target = 0;
  let inFlight = 0;
  let stopped = false;
  const errors: string[] = [];
  const one = async () => {
    inFlight++;
    try {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'load' }], stream: true, max_tokens: 20 }),
        signal: AbortSignal.timeout(120_000),
      });
      // 503 shutting_down from a pod that is draining is expected in a scale-down; anything else is not.
      if (!res.ok && res.status !== 503) errors.push(`HTTP ${res.status}: ${await res.text()}`);
      await res.body?.cancel().catch(() => undefined);
      if (res.ok) await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      // undici's "fetch failed" says why in its cause (refused, reset, …): keep it.
      if (!stopped) errors.push(`${new Date().toISOString()} ${String(err)}${err instanceof Error && err.cause ? `: ${String(err.cause)}` : ''}`);
    } finally {
      inFlight--;
    }
  };
  const timer = setInterval(() => {
    while (!stopped && inFlight < target) void one();
  }, 50);
  return {
    set(n: number) {
      target = n;
    },
    inFlight: () => inFlight,
    errors,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/**
 * Until the Service's ClusterIP answers. The admission is `ready` once an EndpointSlice lists a ready
 * pod; kube-proxy programs the Service at its next sync after that (at least a second apart), and a
 * connect before it is refused. The load starts once the Service answers, so its errors are the
 * scaling's, not that first sync's.
 */
async function untilServiceAnswers(base: string): Promise<void> {
  await waitFor('the Service to answer on its ClusterIP', async () => ((await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) })).ok ? true : undefined), {
    timeoutMs: 30_000,
    tolerate: (err) => err instanceof TypeError || (err instanceof DOMException && err.name === 'TimeoutError'),
  });
}

async function clusterIpOf(id: string): Promise<string> {
  const svc = await system().kube.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${system().tenantNamespace}/services/md-${id.toLowerCase()}`);
  return svc.spec.clusterIP;
}

/** The replicas the ledger has charged for the admission now (its cpu over one replica's). */
async function chargedReplicas(id: string): Promise<number> {
  const r = await system().ledger.db.execute('SELECT cpu_millis FROM reservation WHERE tenant = ? AND id = ?', ['acme', id]);
  return Number(r.rows[0]?.cpu_millis) / PER_REPLICA_CPU;
}

/** Every 200 ms: pods (Terminating included) vs charged replicas read before and after; a moment with more pods than either is a violation. */
function invariantChecker(id: string) {
  const violations: string[] = [];
  let samples = 0;
  let stopped = false;
  const run = (async () => {
    while (!stopped) {
      const before = await chargedReplicas(id);
      const pods = (await podsOf(system().tenantNamespace, id)).length;
      const after = await chargedReplicas(id);
      samples++;
      if (pods > Math.max(before, after)) violations.push(`${new Date().toISOString()}: ${pods} pods, charged ${before}→${after}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    violations,
    samples: () => samples,
    async stop() {
      stopped = true;
      await run;
    },
  };
}

/** The Deployment's writes in the audit log (Request level for deployments): when each reached the API server and the replicas it set. */
function deploymentWrites(name: string): Array<{ at: number; replicas: number }> {
  const text = readFileSync(join(inject('stack').logDir, AUDIT_LOG), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.includes(name) && l.includes('"deployments"'))
    .map((l) => JSON.parse(l) as { stage: string; verb: string; objectRef?: { resource?: string; name?: string }; requestReceivedTimestamp: string; responseStatus?: { code?: number }; requestObject?: { spec?: { replicas?: number } } })
    .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'deployments' && e.objectRef.name === name && (e.responseStatus?.code ?? 500) < 300)
    .filter((e) => typeof e.requestObject?.spec?.replicas === 'number')
    .map((e) => ({ at: Date.parse(e.requestReceivedTimestamp), replicas: e.requestObject!.spec!.replicas! }));
}

const status = async (id: string) => (await system().api(`/requests/${id}`)).body as ApiBody & { replicas: number; chargedReplicas: number; autoscaleStatus: Record<string, unknown> | null };

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});
async function admitAutoscaled(name: string, spec: Record<string, unknown>, over: Record<string, unknown> = {}): Promise<string> {
  const [id] = await system().admit(1, slowMock({ name, replicas: 1, autoscale: spec, ...over }));
  cleanup.push(async () => {
    await system().api(`/requests/${id}`, { method: 'DELETE' });
    await system().untilState([id!], 'released', 120_000);
  });
  await system().untilState([id!], 'ready', 120_000);
  return id!;
}

describe('autoscaling on the real node', () => {
  it('ramp: load 50 at 10 per replica stops at the quota (4) with QuotaLimited; every Deployment size was charged first', async () => {
    const id = await admitAutoscaled('ramp', autoscale());
    // Every replicas value the Deployment takes, as a watch sees it, with the charge at that moment.
    const seen: Array<{ replicas: number; charged: number }> = [];
    const watch = await new Watch(kubeConfig()).watch(
      `/apis/apps/v1/namespaces/${system().tenantNamespace}/deployments`,
      { fieldSelector: `metadata.name=md-${id.toLowerCase()}` },
      (_type, obj: { spec?: { replicas?: number } }) => {
        const replicas = obj.spec?.replicas ?? 0;
        void chargedReplicas(id).then((charged) => seen.push({ replicas, charged }));
      },
      () => undefined,
    );
    cleanup.push(async () => watch.abort());
    const checker = invariantChecker(id);
    cleanup.push(() => checker.stop());
    const base = `http://${await clusterIpOf(id)}:8000`;
    await untilServiceAnswers(base);
    const load = loadGenerator(base);
    cleanup.push(async () => load.stop());
    load.set(50);

    const limited = await waitFor('4 replicas with QuotaLimited', async (poll) => {
      const a = poll.answer(await system().api(`/requests/${id}`)).body as Awaited<ReturnType<typeof status>>;
      const conditions = (a.autoscaleStatus?.conditions ?? []) as Array<{ type: string; message: string }>;
      return a.replicas === 4 && conditions.some((c) => c.type === 'QuotaLimited') ? a : undefined;
    }, { timeoutMs: 90_000, intervalMs: 500 });
    expect(limited.chargedReplicas).toBe(4);
    // The last change went to 4: a partial grant of 5, or a full one of 4 before the load reached 50.
    expect(limited.autoscaleStatus).toMatchObject({ desiredReplicas: 5, lastDecision: { toReplicas: 4 } });
    // It stays there: no further change while the quota is short (10 more seconds).
    await new Promise((r) => setTimeout(r, 10_000));
    expect((await status(id)).replicas).toBe(4);
    expect(await chargedReplicas(id)).toBe(4);
    await waitFor('the Deployment at 4', async () => seen.some((s) => s.replicas === 4), { timeoutMs: 30_000 });
    load.stop();
    await checker.stop();
    // Each value a watch saw had been charged (the charge read after the event, and charges only grow here).
    expect(seen.filter((s) => s.replicas > s.charged)).toEqual([]);
    expect(checker.violations).toEqual([]);
    expect(load.errors).toEqual([]);
    // In the ledger: one charge per scale-up generation, none beyond the quota.
    const moves = await system().ledger.db.execute("SELECT generation, cpu_millis, at FROM quota_movement WHERE reservation_id = ? AND direction = 'charge' ORDER BY generation", [id]);
    expect(moves.rows.reduce((sum, m) => sum + Number(m.cpu_millis), 0)).toBe(4 * PER_REPLICA_CPU);
    // In the API server's audit log: every write of the Deployment set replicas the ledger had
    // charged before the write reached the API server.
    const charges = moves.rows.map((m) => ({ at: Date.parse(time(m.at)), replicas: Number(m.cpu_millis) / PER_REPLICA_CPU }));
    const chargedAt = (t: number) => charges.filter((c) => c.at <= t).reduce((sum, c) => sum + c.replicas, 0);
    const writes = deploymentWrites(`md-${id.toLowerCase()}`);
    expect(writes.length).toBeGreaterThanOrEqual(2); // the create, and at least one scale-up
    expect(Math.max(...writes.map((w) => w.replicas))).toBe(4);
    expect(writes.filter((w) => w.replicas > chargedAt(w.at)).map((w) => `${new Date(w.at).toISOString()}: ${w.replicas} > charged ${chargedAt(w.at)}`)).toEqual([]);
  }, 240_000);

  it('sawtooth for 5 minutes: at no sampled moment more pods than charged replicas', async () => {
    const id = await admitAutoscaled('saw', autoscale({ maxReplicas: 4 }));
    const checker = invariantChecker(id);
    cleanup.push(() => checker.stop());
    const load = loadGenerator(`http://${await clusterIpOf(id)}:8000`);
    cleanup.push(async () => load.stop());
    const maxima = new Set<number>();
    const minima = new Set<number>();
    const end = Date.now() + 5 * 60_000;
    while (Date.now() < end) {
      load.set(30);
      await new Promise((r) => setTimeout(r, 30_000));
      maxima.add((await status(id)).replicas);
      load.set(0);
      await new Promise((r) => setTimeout(r, 30_000));
      minima.add((await status(id)).replicas);
    }
    load.stop();
    await checker.stop();
    console.log(`[measure] sawtooth: ${checker.samples()} samples, replicas at the peaks ${[...maxima]}, at the troughs ${[...minima]}`);
    expect(checker.samples()).toBeGreaterThan(500);
    expect(checker.violations).toEqual([]);
    // It did scale both ways (the test would prove nothing on a flat line).
    // (30 s of load on a busy 2-core node may reach only 2 replicas before the sample.)
    expect(Math.max(...maxima)).toBeGreaterThanOrEqual(2);
    expect(Math.min(...minima)).toBeLessThan(Math.max(...maxima));
    // Each tooth is a charged scale-up and a scale-down refunded once its pods were gone: not one
    // change stuck half-way.
    const moves = await system().ledger.db.execute('SELECT direction, COUNT(*) AS n FROM quota_movement WHERE reservation_id = ? GROUP BY direction', [id]);
    const count = (direction: string) => Number(moves.rows.find((m) => m.direction === direction)?.n ?? 0);
    console.log(`[measure] sawtooth movements: ${count('charge')} charges (the admission's included), ${count('refund')} refunds`);
    expect(count('charge')).toBeGreaterThanOrEqual(4);
    expect(count('refund')).toBeGreaterThanOrEqual(3);
  }, 600_000);

  it('refund after Terminating: a scale-down is refunded only after the surplus pods (held 20 s) are gone, once', async () => {
    const id = await admitAutoscaled('drain', autoscale({ maxReplicas: 3 }), {
      env: [
        { name: 'TOKEN_DELAY_MS', value: '200' },
        { name: 'QUEUE_LIMIT', value: '100' },
        { name: 'MOCK_SHUTDOWN_DELAY_S', value: '20' },
      ],
    });
    const load = loadGenerator(`http://${await clusterIpOf(id)}:8000`);
    cleanup.push(async () => load.stop());
    load.set(25);
    await waitFor('3 replicas ready', async () => (await podsOf(system().tenantNamespace, id)).filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 3, {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    const checker = invariantChecker(id);
    cleanup.push(() => checker.stop());
    // The ramp-up may itself have stepped down and up again under the load (its own refunds): only
    // the scale-down from here on is the case.
    const refundsOf = async () => {
      const r = await system().ledger.db.execute("SELECT generation, cpu_millis, at FROM quota_movement WHERE reservation_id = ? AND direction = 'refund' ORDER BY at", [id]);
      return r.rows.map((m) => ({ generation: String(m.generation), replicas: Number(m.cpu_millis) / PER_REPLICA_CPU, at: Date.parse(time(m.at)) }));
    };
    const earlier = new Set((await refundsOf()).map((m) => m.generation));
    const chargedBefore = await chargedReplicas(id);
    expect(chargedBefore, 'three ready pods are three charged replicas').toBe(3);
    load.set(0);
    // Scale-down: replicas drop first; the charge stays while the surplus pods are Terminating. The
    // autoscaler may go 3 → 1 at once or step down through 2 (the window's highest recommendation
    // can be 2 while the load drains): each step is its own change, refunded once.
    let lastSurplusSeen = 0;
    let terminatingSince = 0;
    /** For n pods: the last moment more than n pods (Terminating ones included) were still there. */
    const lastSeenAbove = new Map<number, number>();
    await waitFor('the surplus pods gone', async () => {
      const asked = Date.now(); // before the list: the pods it returns existed after this moment
      const pods = await podsOf(system().tenantNamespace, id);
      if (pods.some((p) => p.metadata?.deletionTimestamp)) terminatingSince ||= asked;
      for (let n = 0; n < pods.length; n++) lastSeenAbove.set(n, asked);
      if (pods.length > 1) {
        lastSurplusSeen = asked;
        return false;
      }
      return terminatingSince > 0;
    }, { timeoutMs: 180_000, intervalMs: 200 });
    await checker.stop();
    expect(lastSurplusSeen - terminatingSince, 'the pods were held Terminating').toBeGreaterThanOrEqual(15_000);
    await waitFor('the refunds', async () => (await chargedReplicas(id)) === 1, { timeoutMs: 30_000, intervalMs: 200 });
    const refunds = (await refundsOf()).filter((m) => !earlier.has(m.generation));
    expect(refunds.length, 'one or two steps down').toBeGreaterThanOrEqual(1);
    expect(new Set(refunds.map((m) => m.generation)).size, 'each change refunded once').toBe(refunds.length);
    expect(refunds.reduce((sum, m) => sum + m.replicas, 0), 'the two surplus replicas refunded, no more').toBe(2);
    let charged = chargedBefore;
    for (const m of refunds) {
      charged -= m.replicas;
      // Refunded down to `charged` only after no more than `charged` pods were left.
      expect(m.at, `refund of generation ${m.generation} (down to ${charged}) after its pods were gone`).toBeGreaterThanOrEqual(lastSeenAbove.get(charged) ?? 0);
    }
    expect(await chargedReplicas(id)).toBe(1);
    expect(checker.violations).toEqual([]);
  }, 360_000);
});
