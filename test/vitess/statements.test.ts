// The statement check: run the admission services, the operator's tenant tool, the
// controller's ledger and outbox stores, the sweep and the ledger checker ON the 2-shard Vitess
// ledger (transaction mode SINGLE: a transaction that writes a second shard fails) through a
// RECORDING Db, then ask vtgate how it routes every statement they issued (`VEXPLAIN PLAN`, with
// its real arguments, against the committed VSchema: `ledger` sharded by tenant, `global`
// unsharded), print the classification per module:function, and FAIL on any statement that is
// not single-shard, global by design or shard-targeted (a scan of one shard, ledger/shards.ts),
// except the listed, justified ones, and on any transaction that reaches two shards or keyspaces.
// docs/vitess-statements.md is the report.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionOf } from '../support/policy.ts';
import { admit } from '../../functions/services/admit.ts';
import { ulidGenerator, type ServiceDeps } from '../../functions/services/deps.ts';
import { listModels, requireReadyModel } from '../../functions/services/models.ts';
import { getQuota } from '../../functions/services/quota.ts';
import { deleteAdmission, getAdmission, listAdmissions } from '../../functions/services/requests.ts';
import { dequeueByWorker, getQueue } from '../../functions/services/queue.ts';
import { sweep } from '../../functions/services/sweep.ts';
import { readyCluster } from '../support/clusters.ts';
import { scaleAdmission } from '../../functions/services/scale.ts';
import { autoscaleChange, readAutoscaleStatus, writeAutoscaleStatus } from '../../ledger/autoscale-change.ts';
import { autoscaleSpecSchema } from '../../schema/autoscale.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { addCluster, changeClusterState, rebalanceCluster, setClusterCapacity } from '../../scripts/operator/cluster-admin.ts';
import { adoptAdmissions } from '../../scripts/operator/cluster-adopt.ts';
import { ledgerAnchors } from '../../ledger/anchors.ts';
import { recordGrant, resumeMoves } from '../../ledger/allotment-moves.ts';
import { listClusters, readAllAllotments, readAudit, readCluster } from '../../ledger/cluster-store.ts';
import { acquireClusterEpoch, heartbeat } from '../../ledger/cluster-epoch.ts';
import { clustersToLeave, markLost, overdueClusters } from '../../ledger/cluster-failover.ts';
import { movablePage, moveOne } from '../../ledger/failover-move.ts';
import { forgetCluster } from '../../scripts/operator/cluster-forget.ts';
import { acquireEpoch, ensureFence } from '../../controller/reservation/leader-epoch.ts';
import { loadReservationRecord, loadReservationRecords, strandedPage, tenantOf } from '../../controller/reservation/record.ts';
import { freeStranded, placementsLeft } from '../../controller/reservation/leftover.ts';
import { markReady, recordScaleApplied, ackCreate, ackCreates, setReleaseBlocked, touchReconciled, transition } from '../../controller/reservation/transitions.ts';
import { refundScaleDown, release } from '../../controller/reservation/quota-moves.ts';
import { resolveConflict } from '../../scripts/operator/resolve-conflict.ts';
import { ack, fail, type claimDue, type ClaimedRow } from '../../controller/reservation/outbox-store.ts';
import { resyncOnce } from '../../controller/reservation/resync.ts';
import { admitFromQueue, queueSweepOnce } from '../../controller/reservation/queue-trigger.ts';
import { ledgerMetrics } from '../../controller/reservation/metrics.ts';
import { createLogger } from '../../controller/runtime/log.ts';
import { Registry } from 'prom-client';
import { readHardQuota } from '../../controller/tenant/hard-quota.ts';
import { setTenantQuota } from '../../scripts/tenant.ts';
import type { Db } from '../../ledger/db.ts';
import { ledgerShards, shardDb } from '../../ledger/shards.ts';
import { claimEverywhere } from '../support/ledger-rows.ts';
import { StatementLog, type RecordedStatement } from '../support/recording-db.ts';
import { emptyLedger } from '../support/ledger-database.ts';
import { vitessLedger, type PlannedStatement } from '../support/vitess.ts';
import { createPlacer, writeAffinity } from '../../ledger/placement.ts';
import { placementPolicy } from '../../ledger/placement-policy.ts';

const V = vitessLedger();
const log = new StatementLog();
let db: Db;
const tenant = V.tenant('stmt');
const queueTenant = V.tenant('stmtq');
const placementTenant = V.tenant('stmtp');
const failoverTenant = V.tenant('stmtf');
beforeAll(async () => {
  // The suites before this one (same ledger) leave due outbox rows: a bounded claim would take theirs.
  await emptyLedger(V.db);
  db = log.wrap(V.db);
});
// Its clusters would place every admission of the suites after it.
afterAll(async () => emptyLedger(V.db));

const parsed = (over: Record<string, unknown> = {}) =>
  admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '1', memory: '1Gi' }, ...over });

/** The claims of this suite's tenant, on every shard (the poller's round). */
const claimMine = async (o: Parameters<typeof claimDue>[1]): Promise<ClaimedRow[]> =>
  (await claimEverywhere(db, o)).filter((r) => r.tenant === tenant);

/**
 * The queue's flows (issue 30) for a tenant of its own (2 cores): the enqueue (queueing admissions
 * that fit and that wait, one with a TTL), the refusal behind the queue, the reads of positions and
 * estimates (GET /requests/:id of a queued one, GET /queue), a cancel (with the Worker's dequeue
 * after it), the Worker's dequeue, and the controller's fenced dequeue after a release (a smaller
 * one passes the head: the bypass). Leaves the 2-core head and a TTL-1 s one queued for the sweep's
 * queue pass; `controllerQueueSweep` finishes it.
 */
async function exerciseQueue(deps: ServiceDeps, epoch: number): Promise<{ head: string; ttl: string; finish: () => Promise<void> }> {
  const as = <T>(entry: string, fn: () => Promise<T>) => log.as(entry, fn);
  const q = queueTenant;
  let n = 0;
  const submit = (cpu: number, over: Record<string, unknown> = {}) =>
    admit(deps, { tenant: q, idempotencyKey: `q${++n}`, requestId: `rq${n}`, parsed: parsed({ name: `q-${n}`, resources: { cpu: String(cpu), memory: '1Gi' }, onShortQuota: 'queue', ...over }) });
  const at = (id: string) => ({ tenant: q, id });
  const warnings: string[] = [];
  const ctlLog = createLogger({ level: 'warn', write: (line) => warnings.push(line) });
  const trigger = { db, now: () => new Date(), metrics: ledgerMetrics(new Registry()), placer: createPlacer(), fence: { cluster: 'default', forTenants: async () => epoch } };
  /** The controller's release of an admitted one (the tenant deleted it). */
  const free = async (id: string) => {
    await as('functions/services/requests.ts:deleteAdmission', () => deleteAdmission(deps, q, id, `free-${id}`));
    expect(await as('controller/reservation/transitions.ts:transition', () => transition(db, at(id), ['deleting'], 'releasing', epoch, new Date(), null))).toBe(true);
    expect(await as('controller/reservation/quota-moves.ts:release', () => release(db, at(id), epoch, new Date()))).toBe(true);
  };

  await as('scripts/tenant.ts:setTenantQuota', () => setTenantQuota(db, q, { cpu: 2000, memory: 16384 }));
  await as('controller/reservation/leader-epoch.ts:ensureFence', () => ensureFence(db, q, 'default', epoch, 'ctl-a', new Date()));
  const a1 = await as('functions/services/admit.ts:admit (queue, fits)', () => submit(1));
  const a2 = await as('functions/services/admit.ts:admit (queue, fits)', () => submit(1));
  const head = await as('functions/services/admit.ts:admit (queued)', () => submit(2));
  const small = await as('functions/services/admit.ts:admit (queued)', () => submit(1));
  const gone = await as('functions/services/admit.ts:admit (queued with a TTL)', () => submit(1, { queueTtlSeconds: 1 }));
  expect([a1, a2, head, small, gone].map((r) => r.outcome)).toEqual(['created', 'created', 'queued', 'queued', 'queued']);
  await as('functions/services/admit.ts:admit (refused behind the queue)', () =>
    admit(deps, { tenant: q, idempotencyKey: 'q-refused', requestId: 'rq-refused', parsed: parsed({ name: 'q-refused' }) }).then(
      () => expect.fail('a refusing admission passed the queue'),
      (err: unknown) => expect(err).toMatchObject({ status: 409, details: { queued: 3 } }),
    ),
  );
  await as('functions/services/requests.ts:getAdmission (queued)', () => getAdmission(deps, q, small.admission.id));
  await as('functions/services/queue.ts:getQueue', () => getQueue(deps, q));
  expect((await as('functions/services/requests.ts:deleteAdmission (cancel)', () => deleteAdmission(deps, q, gone.admission.id, 'rq-cancel'))).state).toBe('cancelled');
  await as('functions/services/queue.ts:dequeueByWorker', () => dequeueByWorker(deps, q, 'rq-worker'));
  const ttl = (await as('functions/services/admit.ts:admit (queued with a TTL)', () => submit(1, { queueTtlSeconds: 1 }))).admission.id;

  // A release frees 1 core: the controller's dequeue lets the 1-core one pass the 2-core head.
  await free(a1.admission.id);
  await as('controller/reservation/queue-trigger.ts:admitFromQueue', () => admitFromQueue(trigger, q, ctlLog, 'release'));
  expect(warnings).toEqual([]);
  expect((await getAdmission({ ...deps, db: V.db }, q, small.admission.id)).state).toBe('admitted');
  expect((await getAdmission({ ...deps, db: V.db }, q, head.admission.id)).queue?.bypassed).toBe(1);

  return {
    head: head.admission.id,
    ttl,
    /** Everything else released: the controller's queue sweep admits the head. */
    finish: async () => {
      await free(a2.admission.id);
      await free(small.admission.id);
      const tenants = await as('controller/reservation/queue-trigger.ts:queueSweepOnce', () =>
        queueSweepOnce(trigger, ctlLog, new AbortController().signal),
      );
      expect(tenants).toBeGreaterThanOrEqual(1);
      expect(warnings).toEqual([]);
      expect((await getAdmission({ ...deps, db: V.db }, q, head.admission.id)).state).toBe('admitted');
    },
  };
}

/**
 * The operator's clusters (docs/multi-cluster.md steps 2–3): add (its spread granted through the
 * saga), `default` registered and its admissions adopted, a re-run of add, the cluster controller's takeovers and heartbeats, drain and ready with their audit rows and every shard's mode, a grant a
 * crash left after its first step and `resume`, a rebalance (a reclaim), and the CLI's reads.
 */
async function exerciseClusters(): Promise<void> {
  const as = <T>(entry: string, fn: () => Promise<T>) => log.as(entry, fn);
  const ctx = { db, actor: 'stmt-operator', now: () => new Date() };
  const name = `c-${tenant}`;
  const capacity = { cpu: 8000, memory: 16384, 'nvidia.com/gpu': 2, modelservices: 8 };
  // The upgrade: the admissions charged so far ran on the unregistered cluster `default`; registered, it adopts them.
  await as('scripts/operator/cluster-admin.ts:addCluster (default)', () => addCluster(ctx, { name: 'default', capacity: { cpu: 64_000, memory: 262_144, 'nvidia.com/gpu': 8, modelservices: 100 } }));
  const adopted = await as('scripts/operator/cluster-adopt.ts:adoptAdmissions', () => adoptAdmissions(ctx, { name: 'default', reason: 'statements' }));
  expect(adopted.anchors.length).toBeGreaterThan(0);
  await as('scripts/operator/cluster-admin.ts:addCluster', () => addCluster(ctx, { name, capacity, reason: 'statements' }));
  await as('scripts/operator/cluster-admin.ts:addCluster (re-run)', () => addCluster(ctx, { name, capacity }));
  // The cluster's controller: its first takeover (joining → ready, every shard's mode), a later one, heartbeats at the new and the old epoch.
  await as('ledger/cluster-epoch.ts:acquireClusterEpoch (joining)', () => acquireClusterEpoch(db, { cluster: name, holder: 'stmt-a', now: new Date() }));
  const retaken = await as('ledger/cluster-epoch.ts:acquireClusterEpoch (a new leader)', () => acquireClusterEpoch(db, { cluster: name, holder: 'stmt-b', now: new Date() }));
  expect(retaken).toMatchObject({ kind: 'taken', state: 'ready', joined: false });
  const epoch = retaken.kind === 'taken' ? retaken.epoch : 0;
  expect(await as('ledger/cluster-epoch.ts:heartbeat', () => heartbeat(db, { cluster: name, epoch, holder: 'stmt-b' }))).toEqual({ kind: 'renewed' });
  expect(await as('ledger/cluster-epoch.ts:heartbeat (superseded)', () => heartbeat(db, { cluster: name, epoch: epoch - 1, holder: 'stmt-a' }))).toMatchObject({ kind: 'superseded', epoch });
  await as('scripts/operator/cluster-admin.ts:changeClusterState (drain)', () => changeClusterState(ctx, { name, action: 'drain', reason: 'statements' }));
  await as('scripts/operator/cluster-admin.ts:changeClusterState (ready)', () => changeClusterState(ctx, { name, action: 'ready' }));
  // The supervisor: a cluster whose heartbeat ran out (the shortest lease, waited out) is marked lost.
  const gone = `${name}-x`;
  await as('scripts/operator/cluster-admin.ts:addCluster (short lease)', () => addCluster(ctx, { name: gone, capacity, leaseMs: 1000 }));
  await as('ledger/cluster-epoch.ts:acquireClusterEpoch (short lease)', () => acquireClusterEpoch(db, { cluster: gone, holder: 'stmt-x', now: new Date() }));
  await new Promise((r) => setTimeout(r, 1300));
  expect((await as('ledger/cluster-failover.ts:overdueClusters', () => overdueClusters(db))).map((c) => c.name)).toContain(gone);
  expect(await as('ledger/cluster-failover.ts:markLost', () => markLost(db, { cluster: gone, seenEpoch: 1, runner: 'stmt-sup', now: new Date() }))).toMatchObject({ kind: 'lost', epoch: 2 });
  const [anchor] = await ledgerAnchors(V.db);
  const want = { cpu: 1000, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 };
  expect(await as('ledger/allotment-moves.ts:recordGrant', () => recordGrant(db, { id: `stmt-${name}`, cluster: name, anchor: anchor!.anchor, want, by: 'stmt' }, new Date()))).toBe('granted');
  // The grant in flight (taken from the pool, not on its shard yet) still counts toward the capacity.
  await as('scripts/operator/check.ts:checkLedger (a grant in flight)', async () => expect(await checkLedger(db, null, 'ns')).toEqual([]));
  expect(await as('ledger/allotment-moves.ts:resumeMoves', () => resumeMoves(db, { olderThanMs: 0, now: () => new Date(Date.now() + 1000) }))).toBe(1);
  // The grant left that shard above its share: rebalance reclaims it into the pool.
  expect((await as('scripts/operator/cluster-admin.ts:rebalanceCluster', () => rebalanceCluster(ctx, { name }))).reclaimed).toEqual(want);
  // A cut of more than the pool holds: the shards' free slack comes back first.
  expect((await as('scripts/operator/cluster-admin.ts:setClusterCapacity', () => setClusterCapacity(ctx, { name, capacity: { cpu: 4000 } }))).changed).toBe(true);
  await as('scripts/cluster.ts:list and show', async () => {
    await listClusters(db);
    await readCluster(db, name);
    await readAllAllotments(db, await ledgerAnchors(db), name);
    await readAudit(db, name);
  });
}

/**
 * Placement (docs/multi-cluster.md step 4) for a tenant of its own on a ready cluster of its own
 * (placed by the affinity policy, which reads the tenant's preference): an admission placed with the
 * slow path (the spread leaves each shard less than one admission), a PATCH increase borrowing first,
 * a refund, a scale-up bounded by the room, an admission queued for cluster room and placed by the
 * controller's dequeue after a release.
 */
async function exercisePlacement(epochOf: (cluster: string) => Promise<number>): Promise<void> {
  const as = <T>(entry: string, fn: () => Promise<T>) => log.as(entry, fn);
  const p = placementTenant;
  const name = `p-${tenant}`;
  // The operator's cluster (exerciseClusters) takes nothing new: this one is the only open cluster.
  await changeClusterState({ db: V.db, actor: 'stmt-operator', now: () => new Date() }, { name: `c-${tenant}`, action: 'drain', reason: 'placement flow' });
  const deps: ServiceDeps = { db, clock: () => new Date(), newId: ulidGenerator(), placer: createPlacer({ policy: placementPolicy('affinity') }) };
  await as('ledger/placement.ts:writeAffinity', () => writeAffinity(db, p, [name]));
  await readyCluster(V.db, name, { cpu: 4000, memory: 8192, 'nvidia.com/gpu': 0, modelservices: 2 }, 'stmt-operator');
  await setTenantQuota(V.db, p, { cpu: 8000, memory: 16384, 'nvidia.com/gpu': 0 });
  const epoch = await epochOf(name); // the controller of the cluster the admissions are placed on
  const at = (id: string) => ({ tenant: p, id });
  const first = await as('functions/services/admit.ts:admit (placed, slow path)', () => admit(deps, { tenant: p, idempotencyKey: 'p1', requestId: 'p1', parsed: parsed() }));
  expect(first.admission.cluster).toBe(name);
  const id = first.admission.id;
  await transition(V.db, at(id), ['admitted'], 'delivered', epoch, new Date(), null);
  const scale = (key: string, o: { replicas?: number; autoscale?: ReturnType<typeof autoscaleSpecSchema>['_output'] }) => scaleAdmission(deps, { tenant: p, id, idempotencyKey: key, requestId: key, ...o });
  await as('functions/services/scale.ts:scaleAdmission (increase on a cluster)', () => scale('ps1', { replicas: 2 }));
  await recordScaleApplied(V.db, at(id), 2, true, epoch, new Date());
  await scale('ps2', { replicas: 1 });
  await recordScaleApplied(V.db, at(id), 3, false, epoch, new Date());
  const rec = await loadReservationRecord(V.db, at(id));
  await as('controller/reservation/quota-moves.ts:refundScaleDown (with a room)', () =>
    refundScaleDown(db, at(id), 3, { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 0 }, epoch, new Date(), rec!.room),
  );
  await scale('ps3', { autoscale: autoscaleSpecSchema(16).parse({ minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 }) });
  await recordScaleApplied(V.db, at(id), 4, true, epoch, new Date());
  await as('ledger/autoscale-change.ts:autoscaleChange (bounded by the room)', () => autoscaleChange(db, { tenant: p, id, epoch, want: 8, now: new Date() }, createPlacer()));
  await as('functions/services/admit.ts:admit (the last room)', () => admit(deps, { tenant: p, idempotencyKey: 'p2', requestId: 'p2', parsed: parsed({ name: 'p2' }) }));
  const queued = await as('functions/services/admit.ts:admit (queued for cluster room)', () =>
    admit(deps, { tenant: p, idempotencyKey: 'p3', requestId: 'p3', parsed: parsed({ name: 'p3', onShortQuota: 'queue' }) }),
  );
  expect(queued.outcome).toBe('queued');
  await deleteAdmission(deps, p, id, 'pd');
  await transition(V.db, at(id), ['deleting'], 'releasing', epoch, new Date(), null);
  await as('controller/reservation/quota-moves.ts:release (with a room)', () => release(db, at(id), epoch, new Date()));
  const trigger = { db, now: () => new Date(), metrics: ledgerMetrics(new Registry()), placer: createPlacer(), fence: { cluster: name, forTenants: async () => epoch } };
  // With a cluster registered, the release's dequeue is the shard's fair one (ledger/queue-fair.ts).
  await as('controller/reservation/queue-trigger.ts:admitFromQueue (placed, fair)', () => admitFromQueue(trigger, p, createLogger({ level: 'error' }), 'release'));
  expect((await getAdmission({ ...deps, db: V.db }, p, queued.admission.id)).cluster).toBe(name);
}

/**
 * The failover move (docs/multi-cluster.md T7) for a tenant of its own: an admission placed on a
 * cluster of the shortest lease, that cluster marked lost once its heartbeat ran out, the
 * supervisor's page of its running admissions on every shard and the move to an open cluster.
 */
async function exerciseFailover(): Promise<void> {
  const as = <T>(entry: string, fn: () => Promise<T>) => log.as(entry, fn);
  const f = failoverTenant;
  const src = `f-${tenant}`;
  const deps: ServiceDeps = { db, clock: () => new Date(), newId: ulidGenerator(), placer: createPlacer({ policy: placementPolicy('affinity') }) };
  await writeAffinity(V.db, f, [src]);
  await readyCluster(V.db, src, { cpu: 4000, memory: 8192, 'nvidia.com/gpu': 0, modelservices: 3 }, 'stmt-operator', 1000);
  await readyCluster(V.db, `${src}-to`, { cpu: 4000, memory: 8192, 'nvidia.com/gpu': 0, modelservices: 3 }, 'stmt-operator');
  await setTenantQuota(V.db, f, { cpu: 8000, memory: 16384, 'nvidia.com/gpu': 0 });
  // Three admissions on the short-lease cluster: one moved and freed by its controller back, one
  // moved and given up by the operator's forget, one deleting (it never moves) released by forget.
  const admitted = [];
  for (const k of ['f1', 'f2', 'f3']) admitted.push((await admit(deps, { tenant: f, idempotencyKey: k, requestId: k, parsed: parsed({ name: k }) })).admission);
  const [freed, givenUp, deleting] = admitted;
  expect([freed!.cluster, givenUp!.cluster, deleting!.cluster]).toEqual([src, src, src]);
  await deleteAdmission({ ...deps, db: V.db }, f, deleting!.id, 'f3-del');
  await new Promise((r) => setTimeout(r, 1300));
  expect(await markLost(V.db, { cluster: src, seenEpoch: 1, runner: 'stmt-sup', now: new Date() })).toMatchObject({ kind: 'lost', epoch: 2 });
  const [lost] = (await as('ledger/cluster-failover.ts:clustersToLeave', () => clustersToLeave(db))).filter((c) => c.name === src);
  const page = await as('ledger/failover-move.ts:movablePage', async () => (await Promise.all((await ledgerShards(db)).map((s) => movablePage(shardDb(db, s.name), src, 200)))).flat());
  expect(page.map((m) => m.id).sort()).toEqual([freed!.id, givenUp!.id].sort());
  for (const m of page) {
    expect(await as('ledger/failover-move.ts:moveOne', () => moveOne(db, deps.placer, { ...m, from: src, lostEpoch: lost!.epoch, runner: 'stmt-sup', now: new Date() }))).toMatchObject({ kind: 'moved', seq: 2 });
  }
  // The lost cluster's controller back: the stranded pages of its cluster, what the admission left there, the room freed.
  const epoch = await acquireEpoch(V.db, src, 'ctl-f', new Date());
  await ensureFence(V.db, f, src, epoch, 'ctl-f', new Date());
  const stranded = await as('controller/reservation/record.ts:strandedPage', async () =>
    (await Promise.all((await ledgerShards(db)).map((s) => strandedPage(shardDb(db, s.name), { cluster: src, after: null, limit: 100 })))).flat(),
  );
  expect(stranded.map((k) => k.id).sort()).toEqual([freed!.id, givenUp!.id].sort());
  const key = { tenant: f, id: freed!.id };
  const [left] = await as('controller/reservation/leftover.ts:placementsLeft', () => placementsLeft(db, key, src));
  expect(await as('controller/reservation/leftover.ts:freeStranded', () => freeStranded(db, key, src, left!, epoch, new Date()))).toBe(true);
  // The operator gives the cluster up: the other stranded room and the deleting admission.
  const ctx = { db, actor: 'stmt-operator', now: () => new Date() };
  expect(await as('scripts/operator/cluster-forget.ts:forgetCluster', () => forgetCluster(ctx, { name: src, reason: 'statements' }))).toMatchObject({ changed: true, strandedForgotten: 1, released: 1 });
}

/** Every flow of the code that touches the ledger, in the order a reservation lives, on Vitess. */
async function exerciseEverything(): Promise<void> {
  let clock = new Date();
  const deps: ServiceDeps = { db, clock: () => clock, newId: ulidGenerator(), placer: createPlacer() };
  const as = <T>(entry: string, fn: () => Promise<T>) => log.as(entry, fn);
  const at = (id: string) => ({ tenant, id });

  await as('scripts/tenant.ts:setTenantQuota', () => setTenantQuota(db, tenant, { cpu: 8000, memory: 16384, 'nvidia.com/gpu': 0 }));
  const first = await as('functions/services/admit.ts:admit', () => admit(deps, { tenant, idempotencyKey: 'k1', requestId: 'r1', parsed: parsed() }));
  await as('functions/services/admit.ts:admit (replay)', () => admit(deps, { tenant, idempotencyKey: 'k1', requestId: 'r1', parsed: parsed() }));
  await as('functions/services/admit.ts:admit (quota short)', () =>
    admit(deps, { tenant, idempotencyKey: 'k2', requestId: 'r2', parsed: parsed({ resources: { cpu: '16', memory: '64Gi' }, replicas: 4 }) }).catch(() => undefined),
  );
  const id = first.admission.id;
  await as('functions/services/requests.ts:getAdmission', () => getAdmission(deps, tenant, id));
  await as('functions/services/requests.ts:listAdmissions', async () => {
    await listAdmissions(deps, tenant, { limit: 10 });
    await listAdmissions(deps, tenant, { limit: 10, cursor: id });
  });
  await as('functions/services/quota.ts:getQuota', () => getQuota(deps, tenant));

  // The controller takes over, delivers the create row, the reservation becomes ready.
  const epoch = await as('controller/reservation/leader-epoch.ts:acquireEpoch', () => acquireEpoch(db, 'default', 'ctl-a', new Date()));
  await as('controller/reservation/leader-epoch.ts:ensureFence', () => ensureFence(db, tenant, 'default', epoch, 'ctl-a', new Date()));
  const [create] = await as('controller/reservation/outbox-store.ts:claimDue', () => claimMine({ cluster: 'default', holder: 'ctl-a', epoch, leaseMs: 60_000, limit: 10, now: new Date() }));
  if (!create) throw new Error('no create row to claim');
  // The poller reads the claimed deliveries' records on the shard it claimed them from.
  await as('controller/reservation/record.ts:loadReservationRecords', async () => {
    for (const shard of await ledgerShards(db)) await loadReservationRecords(shard.db, [at(id)]);
  });
  await as('controller/reservation/transitions.ts:ackCreate', () => ackCreate(db, create, { namespace: 'ns', name: `md-${id.toLowerCase()}`, uid: 'uid-1' }, new Date()));
  // Two deliveries of one claim that finish together: one transaction on the claim's shard (ack-group.ts).
  for (const key of ['kg1', 'kg2']) await admit(deps, { tenant, idempotencyKey: key, requestId: key, parsed: parsed({ name: key }) });
  const group = await claimMine({ cluster: 'default', holder: 'ctl-a', epoch, leaseMs: 60_000, limit: 10, now: new Date() });
  expect(group).toHaveLength(2);
  const acks = group.map((row) => ({ row, cr: { namespace: 'ns', name: `md-${row.reservationId.toLowerCase()}`, uid: `uid-${row.reservationId}` } }));
  expect(await as('controller/reservation/transitions.ts:ackCreates', () => ackCreates(shardDb(db, group[0]?.claim.shard ?? ''), acks, new Date()))).toBe(true);
  await as('controller/reservation/record.ts:loadReservationRecord', () => loadReservationRecord(db, at(id)));
  await as('controller/tenant/hard-quota.ts:readHardQuota', () => readHardQuota(db, tenant));
  await as('controller/reservation/resync.ts:resyncOnce', () =>
    resyncOnce({ cluster: 'default', shards: () => ledgerShards(db), enqueue: () => undefined, pageSize: 500, now: () => new Date() }, new AbortController().signal),
  );
  await as('controller/reservation/transitions.ts:markReady', () => markReady(db, at(id), epoch, new Date()));
  await as('controller/reservation/transitions.ts:touchReconciled', () => touchReconciled(db, at(id), epoch, new Date()));
  // The tenant calls its ready model (every inference request reads its state), and lists them.
  await as('functions/services/models.ts:requireReadyModel', () => requireReadyModel(deps, tenant, id));
  await as('functions/services/models.ts:listModels', () => listModels(deps, tenant));

  // The tenant scales up (charged at once), then down (refunded by the controller once the pods are gone).
  const scale = (key: string, replicas: number) => scaleAdmission(deps, { tenant, id, idempotencyKey: key, requestId: key, replicas });
  await as('functions/services/scale.ts:scaleAdmission (increase)', () => scale('s1', 2));
  await as('functions/services/scale.ts:scaleAdmission (replay)', () => scale('s1', 2));
  await as('controller/reservation/transitions.ts:recordScaleApplied', () => recordScaleApplied(db, at(id), 2, true, epoch, new Date()));
  await as('functions/services/scale.ts:scaleAdmission (quota short)', () => scale('s2', 16).catch(() => undefined));
  await as('functions/services/scale.ts:scaleAdmission (decrease)', () => scale('s3', 1));
  await recordScaleApplied(db, at(id), 3, false, epoch, new Date());
  await as('controller/reservation/quota-moves.ts:refundScaleDown', () =>
    refundScaleDown(db, at(id), 3, { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 0 }, epoch, new Date(), null),
  );

  // The tenant turns autoscaling on (a change of the spec); the controller's autoscaler scales it up
  // (charged in the change's own transaction) and writes what it decided for the tenant.
  await as('functions/services/scale.ts:scaleAdmission (autoscale)', () =>
    scaleAdmission(deps, { tenant, id, idempotencyKey: 's4', requestId: 's4', autoscale: autoscaleSpecSchema(16).parse({ minReplicas: 1, maxReplicas: 2, targetQueuePerReplica: 10 }) }),
  );
  await recordScaleApplied(db, at(id), 4, true, epoch, new Date());
  await as('ledger/autoscale-change.ts:autoscaleChange', async () => expect(await autoscaleChange(db, { tenant, id, epoch, want: 2, now: new Date() }, createPlacer())).toMatchObject({ outcome: 'changed', to: 2 }));
  await recordScaleApplied(db, at(id), 5, true, epoch, new Date());
  await as('ledger/autoscale-change.ts:readAutoscaleStatus', () => readAutoscaleStatus(db, tenant, id));
  await as('ledger/autoscale-change.ts:writeAutoscaleStatus', () =>
    writeAutoscaleStatus(db, { tenant, id, epoch, status: { desiredReplicas: 2, readyReplicas: 2, load: 12, panic: false, lastDecision: null, conditions: [], observedAt: new Date().toISOString() } }),
  );

  // The queue: enqueue, cancel, the reads, the Worker's and the controller's dequeue.
  const queue = await exerciseQueue(deps, epoch);

  // The sweep enqueues a reconcile row (stale at once); the controller fails it once. Its queue
  // pass expires the queued one whose TTL ran out (the head still does not fit).
  clock = new Date(Date.now() + 3_600_000);
  const cron = `stmt-${tenant}`;
  await as('functions/services/sweep.ts:sweep', () =>
    sweep(deps, { cron, scheduledTime: 1, staleAfterMs: 0, pageSize: 50, maxStatements: 100, holder: 'w1', retentionMs: 86_400_000 }),
  );
  await as('functions/services/sweep.ts:sweep (retry of a finished run)', () =>
    sweep(deps, { cron, scheduledTime: 1, staleAfterMs: 0, pageSize: 50, maxStatements: 100, holder: 'w2' }),
  );
  expect((await getAdmission({ ...deps, db: V.db }, queueTenant, queue.ttl)).state).toBe('expired');
  expect((await getAdmission({ ...deps, db: V.db }, queueTenant, queue.head)).state).toBe('queued');
  const reconcile = (await claimEverywhere(V.db, { cluster: 'default', holder: 'ctl-a', epoch, leaseMs: 60_000, limit: 1000, now: clock })).find((r) => r.tenant === tenant && r.kind === 'reconcile');
  if (!reconcile) throw new Error('no reconcile row to claim');
  await as('controller/reservation/outbox-store.ts:fail', () => fail(db, reconcile, 'boom', { now: clock, retryAt: clock }));

  // The tenant deletes; the controller acknowledges the delete row and releases.
  clock = new Date();
  await as('functions/services/requests.ts:deleteAdmission', () => deleteAdmission(deps, tenant, id, 'r3'));
  const claimed = await claimEverywhere(V.db, { cluster: 'default', holder: 'ctl-a', epoch, leaseMs: 60_000, limit: 1000, now: new Date(Date.now() + 7_200_000) });
  const del = claimed.find((r) => r.tenant === tenant && r.kind === 'delete');
  if (!del) throw new Error('no delete row to claim');
  await as('controller/reservation/outbox-store.ts:ack', () => ack(db, del, new Date(Date.now() + 7_200_000)));
  await as('controller/reservation/transitions.ts:transition', () => transition(db, at(id), ['deleting'], 'releasing', epoch, new Date(), null));
  await as('controller/reservation/transitions.ts:setReleaseBlocked', () => setReleaseBlocked(db, at(id), new Date(), { reason: 'PodsStillPresent', pods: ['pod-a'], finalizers: [] }, epoch, new Date()));
  await as('controller/reservation/quota-moves.ts:release', () => release(db, at(id), epoch, new Date()));
  // A second admission ends in conflict; an operator resolves it (npm run tenant -- resolve).
  const other = await admit(deps, { tenant, idempotencyKey: 'k3', requestId: 'r4', parsed: parsed({ name: 'llm-2' }) });
  await transition(V.db, at(other.admission.id), ['admitted'], 'conflict', epoch, new Date(), 'test');
  await as('controller/reservation/record.ts:tenantOf', () => tenantOf(db, other.admission.id));
  await as('scripts/operator/resolve-conflict.ts:resolveConflict', async () => {
    await resolveConflict(db, at(other.admission.id), 'keep', 'disputed', new Date());
    await resolveConflict(db, at(other.admission.id), 'release', 'settled', new Date());
  });
  await queue.finish();
  await exerciseClusters();
  await exercisePlacement((cluster) => acquireEpoch(V.db, cluster, 'ctl-b', new Date()));
  await exerciseFailover();
  await as('scripts/operator/check.ts:checkLedger', async () => expect(await checkLedger(db, null, 'ns', { settled: false })).toEqual([]));
}

interface Row {
  site: string;
  entries: Set<string>;
  sql: string;
  target: string | null;
  example: RecordedStatement;
  count: number;
  inTransaction: boolean;
  planned?: PlannedStatement;
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim();
const keyOf = (s: { site: string; sql: string; target: string | null }) => `${s.site}\u0000${s.target === null ? 'routed' : 'targeted'}\u0000${oneLine(s.sql)}`;

function group(statements: readonly RecordedStatement[]): Row[] {
  const rows = new Map<string, Row>();
  for (const s of statements) {
    const key = keyOf(s);
    const row = rows.get(key) ?? { site: s.site, entries: new Set<string>(), sql: oneLine(s.sql), target: s.target, example: s, count: 0, inTransaction: false };
    row.entries.add(s.entry);
    row.count++;
    row.inTransaction ||= s.tx !== null;
    rows.set(key, row);
  }
  return [...rows.values()];
}

/**
 * A statement on a shard-targeted session (`USE \`ledger:-80\``) runs on that shard as written:
 * vtgate does not route it, so there is nothing to plan — it reaches one shard by construction.
 */
async function planOf(row: Row): Promise<PlannedStatement> {
  if (row.target !== null) return { ok: true, reach: 'shard-targeted', keyspaces: [row.target.split(':')[0] ?? ''], routes: [`Target:${row.target}`], plan: null };
  return V.plan(row.example.sql, row.example.args);
}

const verdict = (p: PlannedStatement | undefined): string =>
  !p ? 'not planned' : p.ok ? `${p.reach}${p.keyspaces.length ? ` [${p.keyspaces.join('+')}]` : ''} ${p.routes.join(' ')}` : `REFUSED: ${p.error.slice(0, 160)}`;

/** What a statement may reach: one shard (by its tenant, or targeted), the global keyspace, or nothing. */
const ONE_PLACE = new Set(['single-shard', 'shard-targeted', 'unsharded', 'none']);

/**
 * The listed exceptions, with the reason each is global by design (site → reason). Nothing else
 * may reach two shards, two keyspaces, or be refused by vtgate.
 */
const EXCEPTIONS: Record<string, string> = {
  'ledger/shards.ts:ledgerShards': 'SHOW VITESS_SHARDS reads the topology, no table: it is how the shard-by-shard scans find the shards (outside any transaction)',
};

interface TxVerdict {
  entry: string;
  reaches: string[];
  oneShard: boolean;
}

/** Per transaction: does every statement stay on one shard of one keyspace? */
function transactions(rows: readonly Row[]): TxVerdict[] {
  const byStatement = new Map(rows.map((r) => [keyOf(r), r.planned]));
  const txs = new Map<number, { entry: string; reaches: Set<string> }>();
  for (const s of log.statements) {
    if (s.tx === null) continue;
    const t = txs.get(s.tx) ?? { entry: s.entry, reaches: new Set<string>() };
    const p = byStatement.get(keyOf(s));
    t.reaches.add(p?.ok ? `${p.reach}${p.keyspaces.length ? `[${p.keyspaces.join('+')}]` : ''}` : 'refused');
    txs.set(s.tx, t);
  }
  return [...txs.values()].map((t) => {
    const reaches = [...t.reaches].sort();
    const keyspaces = new Set(reaches.flatMap((r) => /\[(.+)\]/.exec(r)?.[1]?.split('+') ?? []));
    return { entry: t.entry, reaches, oneShard: reaches.every((r) => ONE_PLACE.has(r.replace(/\[.*$/, ''))) && keyspaces.size <= 1 };
  });
}

describe('every ledger statement, run on the 2-shard Vitess ledger and planned by vtgate', () => {
  let rows: Row[] = [];

  beforeAll(async () => {
    await exerciseEverything(); // on Vitess with transaction mode SINGLE: a cross-shard transaction would have failed here
    rows = group(log.statements);
    for (const row of rows) row.planned = await planOf(row);
  });

  it('covers every module that talks to the ledger', () => {
    const sites = new Set(rows.map((r) => r.site));
    for (const site of [
      'ledger/charge.ts:chargeQuota',
      'functions/db/quota.ts:readQuota',
      'functions/db/quota.ts:readBreakdown',
      'functions/db/quota.ts:setHard',
      'functions/db/reservations.ts:insertReservation',
      'ledger/movements.ts:insertMovement',
      'functions/db/reservations.ts:findById',
      'functions/db/reservations.ts:findByIdempotencyKey',
      'functions/db/reservations.ts:listByTenant',
      'functions/db/reservations.ts:markDeleting',
      'functions/db/models.ts:modelState',
      'functions/db/models.ts:readyModels',
      'ledger/outbox.ts:enqueue',
      'functions/db/outbox.ts:purgeDone',
      'functions/db/scheduled-runs.ts:claimRun',
      'functions/db/scheduled-runs.ts:finishRun',
      'functions/db/scheduled-runs.ts:staleReservations',
      'ledger/shards.ts:ledgerShards',
      'controller/reservation/leader-epoch.ts:acquireEpoch',
      'controller/reservation/leader-epoch.ts:raiseFences',
      'controller/reservation/leader-epoch.ts:ensureFence',
      'controller/reservation/record.ts:loadReservationRecord',
      'controller/reservation/record.ts:loadReservationRecords',
      'controller/reservation/record.ts:openReservationsPage',
      'controller/reservation/record.ts:tenantOf',
      'controller/tenant/hard-quota.ts:readHardQuota',
      'scripts/operator/resolve-conflict.ts:resolveConflict',
      'controller/reservation/transitions.ts:markReady',
      'controller/reservation/transitions.ts:transition',
      'controller/reservation/transitions.ts:touchReconciled',
      'controller/reservation/transitions.ts:setReleaseBlocked',
      'controller/reservation/quota-moves.ts:release',
      'controller/reservation/outbox-store.ts:claimDue',
      'controller/reservation/outbox-store.ts:ack',
      'controller/reservation/transitions.ts:ackCreate',
      'controller/reservation/transitions.ts:ackCreates',
      'controller/reservation/outbox-store.ts:fail',
      'scripts/operator/check.ts:checkShard',
      'ledger/change.ts:advanceGeneration',
      'ledger/change.ts:insertChange',
      'ledger/autoscale-change.ts:changeOnce',
      'ledger/autoscale-change.ts:writeAutoscaleStatus',
      'ledger/autoscale-change.ts:readAutoscaleStatus',
      'ledger/queue.ts:queuedCount',
      'ledger/queue.ts:lockQuota',
      'ledger/queue.ts:readQueue',
      'ledger/queue.ts:dequeueOnce',
      'ledger/queue.ts:chargeAndCount',
      'ledger/queue.ts:queuedTenants',
      'functions/db/queue.ts:countQueued',
      'functions/db/queue.ts:cancelQueued',
      'functions/db/queue.ts:queuedThrough',
      'functions/db/queue.ts:releaseRate',
      'scripts/operator/cluster-admin.ts:addCluster',
      'ledger/cluster-store.ts:writeAudit',
      'ledger/cluster-epoch.ts:acquireClusterEpoch',
      'ledger/cluster-epoch.ts:heartbeat',
      'ledger/cluster-failover.ts:overdueClusters',
      'ledger/cluster-failover.ts:markLost',
      'ledger/cluster-failover.ts:clustersToLeave',
      'ledger/failover-move.ts:movablePage',
      'ledger/failover-move.ts:readHeld',
      'ledger/failover-move.ts:moveIn',
      'scripts/operator/check.ts:readStranded',
      'controller/reservation/record.ts:strandedPage',
      'controller/reservation/leftover.ts:placementsLeft',
      'controller/reservation/leftover.ts:freeStranded',
      'scripts/operator/cluster-forget.ts:forgetCluster', // its transaction bodies are named after it
      'ledger/cluster-failover.ts:rollModesForward',
      'scripts/operator/cluster-adopt.ts:unplaced',
      'scripts/operator/cluster-adopt.ts:adoptAdmissions',
      'scripts/operator/cluster-admin.ts:changeClusterState',
      'scripts/operator/cluster-admin.ts:setClusterCapacity',
      'ledger/cluster-store.ts:readCluster',
      'ledger/cluster-store.ts:listClusters',
      'ledger/cluster-store.ts:readAllotments',
      'ledger/cluster-store.ts:readShardAllotments',
      'ledger/cluster-store.ts:ensureAllotment',
      'ledger/cluster-store.ts:syncModes',
      'ledger/cluster-store.ts:readAudit',
      'ledger/allotment-moves.ts:recordGrant',
      'ledger/allotment-moves.ts:applyGrant',
      'ledger/allotment-moves.ts:finishMove',
      'ledger/allotment-moves.ts:pendingMoves',
      'ledger/allotment-moves.ts:moveLog',
      'ledger/allotment-moves.ts:recordReclaim',
      'ledger/allotment-moves.ts:applyReclaim',
      'ledger/allotment-moves.ts:finishReclaim',
    ]) {
      expect(sites, site).toContain(site);
    }
  });

  it('every statement reaches one shard (by its tenant, or shard-targeted) or the global keyspace; exceptions are listed', () => {
    expect(rows.length).toBeGreaterThan(0);
    const wide = rows.filter((r) => !(r.planned?.ok && ONE_PLACE.has(r.planned.reach)) && !(r.site in EXCEPTIONS));
    expect(wide.map((r) => `${r.site}: ${verdict(r.planned)}: ${r.sql.slice(0, 160)}`)).toEqual([]);
    const unused = Object.keys(EXCEPTIONS).filter((site) => !rows.some((r) => r.site === site));
    expect(unused, 'an exception for a statement the flows no longer issue').toEqual([]);
    for (const r of rows.filter((row) => row.site in EXCEPTIONS)) expect(r.inTransaction, `${r.site} is an exception only outside transactions`).toBe(false);
  });

  it('no transaction reaches a second shard or keyspace', () => {
    const txs = transactions(rows);
    expect(txs.length).toBeGreaterThan(5);
    expect(txs.filter((t) => !t.oneShard).map((t) => `${t.entry}: ${t.reaches.join(', ')}`)).toEqual([]);
  });

  afterAll(() => {
    const order = (r: Row) => `${r.site}`;
    rows.sort((a, b) => order(a).localeCompare(order(b)));
    const table = [
      '| module:function | called from | tx | n | vtgate plan | statement |',
      '|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.site} | ${[...r.entries].join('<br>')} | ${r.inTransaction ? 'yes' : ''} | ${r.count} | ${verdict(r.planned).replace(/\|/g, '\\|')} | \`${r.sql.slice(0, 220).replace(/\|/g, '\\|')}${r.sql.length > 220 ? '…' : ''}\` |`,
      ),
    ].join('\n');
    const summary = new Map<string, number>();
    for (const r of rows) {
      const k = r.planned?.ok ? r.planned.reach : 'refused';
      summary.set(k, (summary.get(k) ?? 0) + 1);
    }
    const txs = new Map(transactions(rows).map((t) => [`${t.entry} | ${t.reaches.join(', ')}`, t.oneShard ? 'one shard' : 'NOT single-shard']));
    const txTable = ['| transaction of | statements reach | verdict |', '|---|---|---|', ...[...txs].map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
    const out = `${table}\n\nDistinct statements: ${rows.length}. ${[...summary].map(([k, n]) => `${k}: ${n}`).join(', ')}\n\n${txTable}\n`;
    writeFileSync(join(V.stack.runDir, 'vitess-statements.md'), out);
    console.log(`[vitess statements]\n${out}`);
  });
});
