// Placement in the charging transaction (docs/multi-cluster.md step 4), at service level against the
// real ledger (MariaDB through ps-http-sim; the 2-shard Vitess keyspace in the `vitess` project): an
// admission is charged on its tenant's quota and reserved on one cluster's allotment on the
// tenant's shard in ONE transaction, so each exists on exactly one cluster and no cluster is ever
// over its capacity; the Vitess run also goes through the slow path (an allotment borrowed from the
// pool, or from the other shard's slack). Release, refund, PATCH, autoscale and the dequeue move the
// room with the money. checkLedger (cluster-reserved, allotment-bounds, cluster-capacity, the money
// checks) is clean after each.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Amounts } from '../../schema/model-service.ts';
import { admissionOf } from '../support/policy.ts';
import { createLedgerDatabase, emptyLedger, type LedgerDatabase } from '../support/ledger-database.ts';
import { rejection } from '../support/rejection.ts';
import { admit } from '../../functions/services/admit.ts';
import { deleteAdmission, getAdmission } from '../../functions/services/requests.ts';
import { scaleAdmission } from '../../functions/services/scale.ts';
import { acquireEpoch, ensureFence } from '../../controller/reservation/leader-epoch.ts';
import { release, refundScaleDown } from '../../controller/reservation/quota-moves.ts';
import { recordScaleApplied, transition } from '../../controller/reservation/transitions.ts';
import { autoscaleChange } from '../../ledger/autoscale-change.ts';
import { ledgerAnchors, shardOfTenant, type ShardAnchor } from '../../ledger/anchors.ts';
import { listClusters, readAllAllotments, sumOf } from '../../ledger/cluster-store.ts';
import { dequeueTenant } from '../../ledger/queue.ts';
import { createPlacer, writeAffinity } from '../../ledger/placement.ts';
import { placementPolicy } from '../../ledger/placement-policy.ts';
import { addCluster, changeClusterState, ClusterRefused, setClusterCapacity } from '../../scripts/operator/cluster-admin.ts';
import { adoptAdmissions } from '../../scripts/operator/cluster-adopt.ts';
import { recordGrant } from '../../ledger/allotment-moves.ts';
import { sweep } from '../../functions/services/sweep.ts';
import { closeClusterLedger, readyCluster } from '../support/clusters.ts';
import { checkLedger } from '../../scripts/operator/check.ts';

let L: LedgerDatabase;
let anchors: ShardAnchor[];
let epoch: number;
beforeAll(async () => {
  L = await createLedgerDatabase();
  anchors = await ledgerAnchors(L.db);
});
afterAll(() => closeClusterLedger(L));
const tenants = new Set<string>();
// Each test starts from an empty ledger: a registered cluster changes every admission after it.
beforeEach(async () => {
  tenants.clear();
  await emptyLedger(L.db);
});

/**
 * The test plays the controller of every cluster (the fence is per tenant and cluster): a new
 * epoch, and each tenant's fence on each registered cluster raised to it.
 */
async function fenceEverywhere(): Promise<void> {
  epoch = await acquireEpoch(L.db, 'default', 'placement-test', new Date());
  for (const c of await listClusters(L.db)) for (const t of tenants) await ensureFence(L.db, t, c.name, epoch, 'placement-test', new Date());
}

/** A tenant with quota, and the controller's epoch taken after it (its fence rows raised with it). */
async function tenant(name: string, ...limits: string[]): Promise<void> {
  await L.setQuota(name, ...limits);
  tenants.add(name);
  await fenceEverywhere();
}

/** Capacity per cluster: 4 model services (the acceptance's), cpu for 4 replicas of 1 core. */
const CAP: Amounts = { cpu: 4000, memory: 16_384, 'nvidia.com/gpu': 0, modelservices: 4 };
const admin = { actor: 'ops-test', now: () => new Date() };

/** Registers clusters and makes them ready (each one's controller takes it over). */
async function clusters(names: readonly string[], capacity: Amounts = CAP): Promise<void> {
  for (const name of names) await readyCluster(L.db, name, capacity);
  await fenceEverywhere();
}

let seq = 0;
const request = (o: { replicas?: number; queue?: boolean; autoscale?: Record<string, unknown> } = {}) =>
  admissionOf({
    name: 'llm',
    image: 'ghcr.io/acme/llm:1.0',
    replicas: o.replicas ?? 1,
    resources: { cpu: '1', memory: '1Gi' },
    ...(o.queue ? { onShortQuota: 'queue' } : {}),
    ...(o.autoscale ? { autoscale: o.autoscale } : {}),
  });
const submit = (tenant: string, o: Parameters<typeof request>[0] = {}, deps = L.deps()) =>
  admit(deps, { tenant, idempotencyKey: `k-${++seq}`, requestId: `r-${seq}`, parsed: request(o) });

/** Every reservation with its cluster and room, and the clusters its create rows are routed to. */
async function placements(): Promise<Array<{ id: string; tenant: string; state: string; cluster: string; room: string | null; routed: string }>> {
  const out = [];
  for (const a of anchors) {
    const r = await a.shard.db.execute(
      `SELECT r.id, r.tenant, r.state, r.cluster, r.room_anchor,
              (SELECT GROUP_CONCAT(o.cluster ORDER BY o.seq) FROM outbox o WHERE o.tenant = r.tenant AND o.reservation_id = r.id AND o.kind = 'create') AS routed
         FROM reservation r ORDER BY r.id`,
    );
    out.push(...r.rows.map((x) => ({ id: String(x.id), tenant: String(x.tenant), state: String(x.state), cluster: String(x.cluster), room: x.room_anchor === null ? null : String(x.room_anchor), routed: String(x.routed) })));
  }
  return out;
}
/** The anchor of the tenant's shard: where its admissions' rooms are. */
const anchorOf = (tenant: string) => anchors.find((a) => a.shard.name === shardOfTenant(anchors.map((x) => x.shard), tenant).name)!.anchor;
const reservedOn = async (cluster: string) => sumOf(await readAllAllotments(L.db, anchors, cluster), 'reserved');
const clean = async () => expect(await checkLedger(L.db, null, undefined)).toEqual([]);
const usedServices = (tenant: string) => L.count("SELECT used FROM tenant_quota WHERE tenant = ? AND resource = 'modelservices'", [tenant]);

async function releaseOne(tenant: string, id: string): Promise<void> {
  await deleteAdmission(L.deps(), tenant, id, `del-${id}`);
  expect(await transition(L.db, { tenant, id }, ['deleting'], 'releasing', epoch, new Date(), null)).toBe(true);
  expect(await release(L.db, { tenant, id }, epoch, new Date())).toBe(true);
}

describe('with no cluster registered', () => {
  it('admits to the unregistered cluster "default", reserving no room (every install before issue 33)', async () => {
    await tenant('pl-solo', 'cpu=4', 'memory=8Gi', 'modelservices=4');
    const { admission } = await submit('pl-solo');
    expect(admission.cluster).toBe('default');
    expect((await getAdmission(L.deps(), 'pl-solo', admission.id)).cluster).toBe('default');
    expect(await placements()).toEqual([expect.objectContaining({ id: admission.id, cluster: 'default', room: null, routed: 'default' })]);
    await releaseOne('pl-solo', admission.id);
    await clean();
  });
});

describe('adopting what ran before the first cluster (npm run cluster -- adopt default)', () => {
  const ctx = () => ({ db: L.db, ...admin });

  it("registering `default` leaves its charged admissions without a room until adopt gives each its room on its tenant's anchor; a re-run changes nothing", async () => {
    await tenant('pl-old-a', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    await tenant('pl-old-b', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const a1 = (await submit('pl-old-a')).admission.id;
    const a2 = (await submit('pl-old-a', { replicas: 2 })).admission.id;
    const b1 = (await submit('pl-old-b')).admission.id;
    const gone = (await submit('pl-old-b')).admission.id;
    await releaseOne('pl-old-b', gone);
    await addCluster(ctx(), { name: 'default', capacity: { ...CAP, cpu: 16_000 } });
    expect((await checkLedger(L.db, null, undefined)).map((d) => [d.check, d.reservation])).toEqual(
      expect.arrayContaining([['cluster-reserved', a1], ['cluster-reserved', a2], ['cluster-reserved', b1]]),
    );
    const r = await adoptAdmissions(ctx(), { name: 'default', reason: 'upgrade' });
    expect(r.anchors.reduce((s, x) => s + x.admissions, 0)).toBe(3);
    const rows = await placements();
    for (const id of [a1, a2, b1]) expect(rows.find((x) => x.id === id)).toMatchObject({ cluster: 'default', room: anchorOf(rows.find((x) => x.id === id)!.tenant) });
    expect(rows.find((x) => x.id === gone)).toMatchObject({ state: 'released', room: null });
    expect(await reservedOn('default')).toEqual({ cpu: 4000, memory: 4096, 'nvidia.com/gpu': 0, modelservices: 3 });
    await clean();
    const adopted = await L.fingerprint();
    expect(await adoptAdmissions(ctx(), { name: 'default' })).toEqual({ anchors: [] });
    expect(await L.fingerprint()).toBe(adopted);
    // An adopted admission's release gives its room back with the quota.
    await releaseOne('pl-old-a', a2);
    expect(await reservedOn('default')).toEqual({ cpu: 2000, memory: 2048, 'nvidia.com/gpu': 0, modelservices: 2 });
    await clean();
  });

  it('a capacity that cannot hold what runs is refused and nothing is written; after a raise, adopt takes it', async () => {
    await tenant('pl-old-c', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    for (let i = 0; i < 3; i++) await submit('pl-old-c');
    await addCluster(ctx(), { name: 'default', capacity: { ...CAP, modelservices: 2 } });
    const before = await L.fingerprint();
    const refused = adoptAdmissions(ctx(), { name: 'default' });
    await expect(refused).rejects.toThrow(ClusterRefused);
    await expect(refused).rejects.toThrow(/cannot hold what already runs on it: short of .*modelservices \d+ on anchor/);
    expect(await L.fingerprint()).toBe(before);
    await setClusterCapacity(ctx(), { name: 'default', capacity: { modelservices: 3 } });
    expect((await adoptAdmissions(ctx(), { name: 'default' })).anchors).toEqual([{ anchor: anchorOf('pl-old-c'), admissions: 3, amounts: { cpu: 3000, memory: 3072, 'nvidia.com/gpu': 0, modelservices: 3 } }]);
    await clean();
  });

  it('releases racing the adopt: each admission ends released without a room or adopted with one, the room exact (3 rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      await emptyLedger(L.db);
      await tenant('pl-old-d', 'cpu=10', 'memory=20Gi', 'modelservices=10');
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push((await submit('pl-old-d')).admission.id);
      await addCluster(ctx(), { name: 'default', capacity: { ...CAP, cpu: 16_000, modelservices: 8 } });
      const [adopted] = await Promise.all([adoptAdmissions(ctx(), { name: 'default' }), ...ids.slice(0, 3).map((id) => releaseOne('pl-old-d', id))]);
      expect(adopted.anchors.reduce((s, a) => s + a.admissions, 0)).toBeGreaterThanOrEqual(3);
      expect(await reservedOn('default'), `round ${round}`).toEqual({ cpu: 3000, memory: 3072, 'nvidia.com/gpu': 0, modelservices: 3 });
      await clean();
    }
  });

  it('refuses a cluster that is not registered', async () => {
    await expect(adoptAdmissions(ctx(), { name: 'default' })).rejects.toThrow(/no cluster named default/);
  });
});

describe('placement (acceptance A1, ledger level)', () => {
  it('3 clusters of 4, 3 tenants, 10 admissions: each on exactly one cluster, none over capacity, each charge the sum of its admissions', async () => {
    await clusters(['c1', 'c2', 'c3']);
    const tenants = ['pl-a', 'pl-b', 'pl-c'];
    for (const t of tenants) await tenant(t, 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const ids: Record<string, string> = {};
    for (let i = 0; i < 10; i++) {
      const tenant = tenants[i % 3]!;
      const { outcome, admission } = await submit(tenant);
      expect(outcome).toBe('created');
      expect(['c1', 'c2', 'c3']).toContain(admission.cluster);
      ids[admission.id] = admission.cluster!;
    }
    const rows = await placements();
    expect(rows).toHaveLength(10);
    for (const r of rows) {
      // One cluster per admission: the reservation's, its room's and its create row's (exactly one) agree.
      expect(r).toMatchObject({ cluster: ids[r.id], routed: ids[r.id], room: anchorOf(r.tenant) });
    }
    const perCluster = ['c1', 'c2', 'c3'].map((c) => rows.filter((r) => r.cluster === c).length);
    expect(perCluster.reduce((a, b) => a + b)).toBe(10);
    for (const [i, c] of ['c1', 'c2', 'c3'].entries()) {
      expect(perCluster[i]).toBeLessThanOrEqual(4);
      expect((await reservedOn(c)).modelservices).toBe(perCluster[i]);
    }
    for (const t of tenants) expect(await usedServices(t)).toBe(rows.filter((r) => r.tenant === t).length);
    await clean();
    // Two places left: the 11th and 12th fit, the 13th does not (409 no_cluster_capacity, nothing written).
    await submit('pl-a');
    await submit('pl-b');
    const before = await L.fingerprint();
    const err = await rejection(submit('pl-c'));
    expect(err).toMatchObject({ status: 409, code: 'no_cluster_capacity' });
    expect((err as { details: { clusters: unknown[] } }).details.clusters).toEqual(
      expect.arrayContaining([{ cluster: 'c1', resources: expect.arrayContaining(['modelservices']) }]),
    );
    expect(await L.fingerprint()).toBe(before);
    await clean();
  });

  it('a full cluster is passed over: with c1 preferred and full, the next admission lands on c2 and nothing is routed to c1', async () => {
    await clusters(['c1', 'c2']);
    await tenant('pl-aff', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    await writeAffinity(L.db, 'pl-aff', ['c1', 'c2']);
    const deps = { ...L.deps(), placer: createPlacer({ policy: placementPolicy('affinity') }) };
    const first = [];
    for (let i = 0; i < 4; i++) first.push((await submit('pl-aff', {}, deps)).admission.cluster);
    expect(first).toEqual(['c1', 'c1', 'c1', 'c1']);
    const next = (await submit('pl-aff', {}, deps)).admission;
    expect(next.cluster).toBe('c2');
    expect((await placements()).find((r) => r.id === next.id)).toMatchObject({ cluster: 'c2', routed: 'c2' });
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND cluster <> 'c2'", [next.id])).toBe(0);
    await clean();
  });

  it('least-loaded spreads one isolate\'s consecutive admissions within its cached view of the rooms: what it reserved counts at once', async () => {
    // Room for 2 on each cluster on every shard's allotment (on Vitess each anchor holds a share): no slow path.
    await clusters(['c1', 'c2', 'c3'], { ...CAP, cpu: 16_000, memory: 65_536, modelservices: 16 });
    await tenant('pl-spread', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const deps = { ...L.deps(), placer: createPlacer({ roomsTtlMs: 60_000 }) }; // one isolate whose view of the rooms never expires here
    const placed = [];
    for (let i = 0; i < 6; i++) placed.push((await submit('pl-spread', {}, deps)).admission.cluster);
    expect([...placed].sort()).toEqual(['c1', 'c1', 'c2', 'c2', 'c3', 'c3']);
    await clean();
  });

  it('concurrent admissions never take more than a cluster holds', async () => {
    await clusters(['c1']);
    await tenant('pl-race', 'cpu=20', 'memory=40Gi', 'modelservices=20');
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => submit('pl-race')));
    const ok = results.filter((r) => r.status === 'fulfilled');
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 409, code: 'no_cluster_capacity' });
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.length).toBeLessThanOrEqual(4);
    if (L.backend === 'mariadb') expect(ok).toHaveLength(4); // one shard holds the whole capacity: no slow path to lose a race in
    expect((await reservedOn('c1')).modelservices).toBe(ok.length);
    expect(await usedServices('pl-race')).toBe(ok.length);
    await clean();
  });
});

describe('the room moves with the money', () => {
  it('an admission on a cluster costs 7 round trips with the placer warm: BEGIN, 3 inserts, the charge, the room, COMMIT', async () => {
    await clusters(['c1'], { ...CAP, cpu: 16_000, modelservices: 16 }); // each shard's share holds both admissions: no slow path
    await tenant('pl-rt', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const calls: string[] = [];
    const deps = {
      ...L.deps({ fetch: (url, init) => (calls.push(((JSON.parse(init?.body ?? '{}') as { query?: string }).query ?? '').split(/\s+/)[0] ?? ''), fetch(url, init)) }),
      placer: createPlacer({ roomsTtlMs: 600_000 }),
    };
    await submit('pl-rt', {}, deps);
    calls.length = 0;
    expect((await submit('pl-rt', {}, deps)).admission.cluster).toBe('c1');
    expect(calls).toEqual(['BEGIN', 'INSERT', 'INSERT', 'INSERT', 'UPDATE', 'UPDATE', 'COMMIT']);
    await clean();
  });

  it('a release gives the room back, and a full cluster admits again', async () => {
    await clusters(['c1']);
    await tenant('pl-rel', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await submit('pl-rel')).admission.id);
    expect(await rejection(submit('pl-rel'))).toMatchObject({ status: 409, code: 'no_cluster_capacity' });
    await releaseOne('pl-rel', ids[0]!);
    expect((await reservedOn('c1')).modelservices).toBe(3);
    expect((await submit('pl-rel')).admission.cluster).toBe('c1');
    await clean();
  });

  it('quota is reported before cluster room, and a refusal for either writes nothing', async () => {
    await clusters(['c1'], { ...CAP, modelservices: 1 });
    await tenant('pl-both', 'cpu=1', 'memory=1Gi', 'modelservices=5');
    await submit('pl-both');
    const before = await L.fingerprint();
    expect(await rejection(submit('pl-both'))).toMatchObject({ status: 409, code: 'quota_exceeded' });
    await tenant('pl-both', 'cpu=5', 'memory=5Gi', 'modelservices=5');
    const quotaSet = await L.fingerprint();
    expect(quotaSet).not.toBe(before);
    expect(await rejection(submit('pl-both'))).toMatchObject({ status: 409, code: 'no_cluster_capacity' });
    expect(await L.fingerprint()).toBe(quotaSet);
    await clean();
  });

  it('a PATCH increase reserves on its cluster: beyond the room it is 409 cluster_capacity_exceeded and changes nothing; a refund gives it back', async () => {
    await clusters(['c1']);
    await tenant('pl-scale', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const { admission } = await submit('pl-scale');
    const at = { tenant: 'pl-scale', id: admission.id };
    await transition(L.db, at, ['admitted'], 'delivered', epoch, new Date(), null);
    const patch = (replicas: number, key: string) => scaleAdmission(L.deps(), { ...at, idempotencyKey: key, requestId: `r-${key}`, replicas });
    const before = await L.fingerprint();
    expect(await rejection(patch(5, 'p5'))).toMatchObject({ status: 409, code: 'cluster_capacity_exceeded', details: { cluster: 'c1' } });
    expect(await L.fingerprint()).toBe(before);
    expect((await patch(4, 'p4')).outcome).toBe('accepted');
    expect((await reservedOn('c1')).cpu).toBe(4000);
    await clean();
    // Settled at 4, then down to 2: the refund gives 2 cores back to the room.
    expect(await recordScaleApplied(L.db, at, 2, true, epoch, new Date())).toBe(true);
    expect((await patch(2, 'p2')).outcome).toBe('accepted');
    expect(await recordScaleApplied(L.db, at, 3, false, epoch, new Date())).toBe(true);
    const rec = (await placements()).find((r) => r.id === admission.id)!;
    const delta: Amounts = { cpu: 2000, memory: 2048, 'nvidia.com/gpu': 0, modelservices: 0 };
    expect(await refundScaleDown(L.db, at, 3, delta, epoch, new Date(), { anchor: rec.room!, cluster: 'c1' })).toBe(true);
    expect((await reservedOn('c1')).cpu).toBe(2000);
    await clean();
  });

  it('a draining cluster takes no new admission, but what runs there may still grow', async () => {
    await clusters(['c1', 'c2']);
    await tenant('pl-drain', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    await writeAffinity(L.db, 'pl-drain', ['c1']);
    const deps = { ...L.deps(), placer: createPlacer({ policy: placementPolicy('affinity') }) };
    const { admission } = await submit('pl-drain', {}, deps);
    expect(admission.cluster).toBe('c1');
    await changeClusterState({ db: L.db, ...admin }, { name: 'c1', action: 'drain', reason: 'maintenance' });
    expect((await submit('pl-drain', {}, deps)).admission.cluster).toBe('c2');
    const at = { tenant: 'pl-drain', id: admission.id };
    await transition(L.db, at, ['admitted'], 'delivered', epoch, new Date(), null);
    expect((await scaleAdmission(L.deps(), { ...at, idempotencyKey: 'grow', requestId: 'r-grow', replicas: 2 })).outcome).toBe('accepted');
    expect((await reservedOn('c1')).cpu).toBe(2000);
    await clean();
  });

  it("the autoscaler's scale-up is bounded by its cluster's room as well as by the quota", async () => {
    await clusters(['c1'], { ...CAP, cpu: 3000 });
    await tenant('pl-auto', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const { admission } = await submit('pl-auto', { autoscale: { minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 } });
    const at = { tenant: 'pl-auto', id: admission.id };
    await transition(L.db, at, ['admitted'], 'delivered', epoch, new Date(), null);
    expect(await autoscaleChange(L.db, { ...at, epoch, want: 5, now: new Date() }, createPlacer())).toMatchObject({ outcome: 'changed', from: 1, to: 3, short: [], cluster: 'c1' });
    expect((await reservedOn('c1')).cpu).toBe(3000);
    expect(await recordScaleApplied(L.db, at, 2, true, epoch, new Date())).toBe(true);
    const before = await L.fingerprint();
    expect(await autoscaleChange(L.db, { ...at, epoch, want: 5, now: new Date() }, createPlacer())).toMatchObject({ outcome: 'quota-limited', from: 3, short: [], cluster: 'c1' });
    expect(await L.fingerprint()).toBe(before);
    await clean();
  });

  it('a queued admission is placed when it leaves the queue: no room → queued (no cluster); after a release the dequeue places it', async () => {
    await clusters(['c1'], { ...CAP, modelservices: 1 });
    await tenant('pl-queue', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const first = (await submit('pl-queue')).admission;
    const waiting = await submit('pl-queue', { queue: true });
    expect(waiting).toMatchObject({ outcome: 'queued', admission: { state: 'queued', cluster: null } });
    const placer = createPlacer();
    // The quota fits, but the cluster has no room: the dequeue leaves it queued and says why.
    const held = await dequeueTenant(L.db, 'pl-queue', { by: { side: 'controller', cluster: 'default', epoch }, now: () => new Date(), requestId: 'dq-1', placer });
    expect(held).toMatchObject({ admitted: [], waiting: { head: waiting.admission.id, forCluster: true } });
    await clean();
    await releaseOne('pl-queue', first.id);
    const moved = await dequeueTenant(L.db, 'pl-queue', { by: { side: 'controller', cluster: 'default', epoch }, now: () => new Date(), requestId: 'dq-2', placer });
    expect(moved.admitted.map((a) => a.id)).toEqual([waiting.admission.id]);
    expect((await getAdmission(L.deps(), 'pl-queue', waiting.admission.id))).toMatchObject({ state: 'admitted', cluster: 'c1' });
    expect((await placements()).find((r) => r.id === waiting.admission.id)).toMatchObject({ cluster: 'c1', routed: 'c1' });
    expect((await reservedOn('c1')).modelservices).toBe(1);
    await clean();
  });
});

describe('a slow path cut short', () => {
  it('a borrow whose request died after the pool gave (G1) is rolled forward by the cron sweep, nothing granted twice', async () => {
    await clusters(['c1']);
    // A fixture: 2 more model services of capacity, held in the pool (the operator's `capacity` would spread them).
    await L.db.execute("UPDATE cluster SET capacity_modelservices = capacity_modelservices + 2, pool_modelservices = pool_modelservices + 2 WHERE name = 'c1'");
    const anchor = anchors[0]!.anchor;
    const before = sumOf(await readAllAllotments(L.db, anchors, 'c1'), 'allotted');
    const want: Amounts = { cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 };
    expect(await recordGrant(L.db, { id: 'borrow:c1:crashed', cluster: 'c1', anchor, want, by: 'worker' }, new Date())).toBe('granted');
    const sweepAt = (ms: number) => sweep({ ...L.deps(), clock: () => new Date(Date.now() + ms) }, { cron: 'placement', scheduledTime: ms, staleAfterMs: 3_600_000, pageSize: 100, maxStatements: 100, holder: 'h' });
    // Younger than 10 s: the saga that started it may still finish it.
    expect(await sweepAt(0)).toMatchObject({ claimed: true, resumed: 0 });
    expect(await sweepAt(11_000)).toMatchObject({ claimed: true, resumed: 1 });
    expect(sumOf(await readAllAllotments(L.db, anchors, 'c1'), 'allotted').modelservices).toBe(before.modelservices + 1);
    expect(await sweepAt(22_000)).toMatchObject({ claimed: true, resumed: 0 });
    await clean();
  });
});

describe('the checker', () => {
  it('sees a room that does not match what the reservations hold', async () => {
    await clusters(['c1']);
    await tenant('pl-drift', 'cpu=10', 'memory=20Gi', 'modelservices=10');
    const { admission } = await submit('pl-drift');
    const room = (await placements())[0]!.room!;
    await L.db.execute('UPDATE cluster_allotment SET reserved_memory_mib = reserved_memory_mib + 1 WHERE anchor = ? AND cluster = ?', [room, 'c1']);
    expect(await checkLedger(L.db, null, undefined)).toEqual([expect.objectContaining({ check: 'cluster-reserved', cluster: 'c1', detail: `anchor ${room}: memory: reserved 1025, reservations hold 1024` })]);
    await L.db.execute('UPDATE cluster_allotment SET reserved_memory_mib = reserved_memory_mib - 1 WHERE anchor = ? AND cluster = ?', [room, 'c1']);
    await L.db.execute('UPDATE reservation SET room_anchor = NULL WHERE tenant = ? AND id = ?', ['pl-drift', admission.id]);
    expect(await checkLedger(L.db, null, undefined)).toEqual(
      expect.arrayContaining([expect.objectContaining({ check: 'cluster-reserved', reservation: admission.id, detail: 'charged on registered cluster c1 without a room' })]),
    );
  });
});
