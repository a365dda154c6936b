// The failover move (ledger/failover-move.ts, docs/multi-cluster.md T7) against the real ledger
// (MariaDB, or the 2-shard Vitess keyspace): the running admissions of a lost cluster move to an open
// cluster in one transaction each. The tenant stays charged once (its quota rows untouched), the room
// on the lost cluster becomes stranded and the same room is taken on the target, the placement left
// is recorded, the lost cluster's pending rows are closed and a create row goes to the target, and a
// `move` movement says so. A second runner, a cluster back in service, no room anywhere and a stale
// controller of the lost cluster change nothing; the lost cluster's leader frees the stranded room
// once (T9), and the operator's `forget` gives a lost cluster up (T10). The checker agrees after
// every case.
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ShardAnchor } from '../../ledger/anchors.ts';
import { acquireClusterEpoch } from '../../ledger/cluster-epoch.ts';
import { markLost, overdueClusters } from '../../ledger/cluster-failover.ts';
import { readAllAllotments, readAudit, readCluster } from '../../ledger/cluster-store.ts';
import { movablePage, moveOne, type Movable, type MoveOutcome } from '../../ledger/failover-move.ts';
import { createPlacer } from '../../ledger/placement.ts';
import { ledgerShards, shardDb } from '../../ledger/shards.ts';
import { admit } from '../../functions/services/admit.ts';
import { deleteAdmission } from '../../functions/services/requests.ts';
import { createSupervisor, supervisorLedger, supervisorMetrics } from '../../controller/cluster/supervisor.ts';
import { createLogger } from '../../controller/runtime/log.ts';
import { acquireEpoch, ensureFence } from '../../controller/reservation/leader-epoch.ts';
import { release } from '../../controller/reservation/quota-moves.ts';
import { transition } from '../../controller/reservation/transitions.ts';
import { freeStranded, placementsLeft } from '../../controller/reservation/leftover.ts';
import { strandedPage } from '../../controller/reservation/record.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { addCluster, changeClusterState, type AdminContext } from '../../scripts/operator/cluster-admin.ts';
import { forgetCluster } from '../../scripts/operator/cluster-forget.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { closeClusterLedger, openClusterLedger } from '../support/clusters.ts';
import { emptyLedger, type LedgerDatabase } from '../support/ledger-database.ts';
import { admissionOf } from '../support/policy.ts';
import { waitFor } from '../support/wait.ts';

let ledger: LedgerDatabase;
let anchors: ShardAnchor[];
let ctx: AdminContext;
const T = 'mv-t';
const CAP: Amounts = { cpu: 8_000, memory: 16_384, 'nvidia.com/gpu': 0, modelservices: 8 };
/** The shortest lease `add` takes: waited out on the database's clock. */
const SHORT = 1_000;
const ONE: Amounts = { cpu: 500, memory: 512, 'nvidia.com/gpu': 0, modelservices: 1 };

beforeAll(async () => ({ ledger, anchors, ctx } = await openClusterLedger()));
afterAll(() => closeClusterLedger(ledger));
beforeEach(async () => {
  await emptyLedger(ledger.db);
  await ledger.setQuota(T, 'cpu=8', 'memory=16Gi', 'modelservices=8');
});

async function ready(name: string, leaseMs: number): Promise<void> {
  await addCluster(ctx, { name, capacity: CAP, leaseMs });
  expect(await acquireClusterEpoch(ledger.db, { cluster: name, holder: `ctl-${name}`, now: new Date() })).toMatchObject({ kind: 'taken', state: 'ready' });
}
let seq = 0;
async function submit(): Promise<string> {
  const r = await admit(ledger.deps(), { tenant: T, idempotencyKey: `mv-${++seq}`, requestId: `r-${seq}`, parsed: admissionOf({ name: `m${seq}`, image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '500m', memory: '512Mi' } }) });
  return r.admission.id;
}
/**
 * mv-1 (short lease) takes `n` admissions while it is the only cluster; then mv-2 joins and mv-1 is
 * marked lost (`diesAfterLost`: by a process that dies right after the global commit, so the shards
 * still hold mv-1 open).
 */
async function lostWith(n: number, o: { diesAfterLost?: boolean } = {}): Promise<{ ids: string[]; lostEpoch: number }> {
  await ready('mv-1', SHORT);
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(await submit());
  await ready('mv-2', 600_000);
  await waitFor("mv-1's heartbeat to run out", async () => ((await overdueClusters(ledger.db)).some((c) => c.name === 'mv-1') ? true : undefined), { timeoutMs: 10_000, intervalMs: 100 });
  const died = new Error('the supervisor died after its commit');
  const afterCommit = o.diesAfterLost
    ? () => {
        throw died;
      }
    : undefined;
  const lost = await markLost(ledger.db, { cluster: 'mv-1', seenEpoch: 1, runner: 'sup-a', now: new Date(), afterCommit }).catch((err: unknown) => {
    if (err !== died) throw err;
    return { kind: 'lost', epoch: 2 } as const;
  });
  if (lost.kind !== 'lost') throw new Error(`mv-1 not lost: ${JSON.stringify(lost)}`);
  return { ids, lostEpoch: lost.epoch };
}
const page = async (cluster: string): Promise<Movable[]> => (await Promise.all((await ledgerShards(ledger.db)).map((s) => movablePage(shardDb(ledger.db, s.name), cluster, 200)))).flat();
const move = (m: Movable, lostEpoch: number, runner = 'sup-a'): Promise<MoveOutcome> =>
  moveOne(ledger.db, createPlacer(), { ...m, from: 'mv-1', lostEpoch, runner, now: new Date() });
const quotaRows = () => ledger.db.execute('SELECT resource, used FROM tenant_quota WHERE tenant = ? ORDER BY resource', [T]).then((r) => r.rows);
const sumOf = (rows: Awaited<ReturnType<typeof readAllAllotments>>, field: 'reserved' | 'stranded') =>
  rows.reduce((s, a) => ({ cpu: s.cpu + a[field].cpu, modelservices: s.modelservices + a[field].modelservices }), { cpu: 0, modelservices: 0 });

describe('the failover move', () => {
  it('moves every running admission off the lost cluster: charged once, stranded there, reserved on the target, rows re-routed, a move movement each', async () => {
    const { ids, lostEpoch } = await lostWith(3);
    // One of them delivered and ready on mv-1 (its binding recorded), one delivered, one never delivered.
    const ctlEpoch = await acquireEpoch(ledger.db, 'mv-1', 'ctl-mv-1', new Date());
    await ensureFence(ledger.db, T, 'mv-1', ctlEpoch, 'ctl-mv-1', new Date());
    for (const [id, to] of [
      [ids[0]!, 'ready'],
      [ids[1]!, 'delivered'],
    ] as const) {
      await ledger.db.execute("UPDATE reservation SET state = ? WHERE tenant = ? AND id = ?", [to, T, id]);
      await ledger.db.execute("INSERT INTO binding (tenant, reservation_id, cluster, namespace, cr_name, uid, created_at, updated_at) VALUES (?, ?, 'mv-1', 'ns', ?, 'uid-1', NOW(3), NOW(3))", [T, id, `md-${id}`]);
    }
    const quotaBefore = await quotaRows();
    const found = await page('mv-1');
    expect(found.map((m) => m.id).sort()).toEqual([...ids].sort());
    for (const m of found) expect(await move(m, lostEpoch)).toEqual({ kind: 'moved', to: 'mv-2', seq: 2 });

    expect(await quotaRows()).toEqual(quotaBefore); // the tenant's charge is where it was: once
    expect(await page('mv-1')).toEqual([]);
    const res = await ledger.db.execute('SELECT id, cluster, placement_seq, state, last_reconciled_at FROM reservation WHERE tenant = ? ORDER BY id', [T]);
    for (const r of res.rows) expect(r).toMatchObject({ cluster: 'mv-2', placement_seq: 2, state: 'admitted', last_reconciled_at: null });
    expect(await ledger.count('SELECT COUNT(*) FROM binding WHERE tenant = ?', [T])).toBe(0);
    // mv-1's room is stranded (its pods may still run there), mv-2's holds the same.
    expect(sumOf(await readAllAllotments(ledger.db, anchors, 'mv-1'), 'reserved')).toEqual({ cpu: 0, modelservices: 0 });
    expect(sumOf(await readAllAllotments(ledger.db, anchors, 'mv-1'), 'stranded')).toEqual({ cpu: 3 * ONE.cpu, modelservices: 3 });
    expect(sumOf(await readAllAllotments(ledger.db, anchors, 'mv-2'), 'reserved')).toEqual({ cpu: 3 * ONE.cpu, modelservices: 3 });
    const left = await ledger.db.execute('SELECT reservation_id, seq, cluster, state, reason, held_cpu_millis FROM placement WHERE tenant = ?', [T]);
    expect(left.rows).toHaveLength(3);
    for (const p of left.rows) expect({ ...p, held_cpu_millis: Number(p.held_cpu_millis) }).toMatchObject({ seq: 1, cluster: 'mv-1', state: 'stranded', reason: `failover: mv-1 lost (epoch ${lostEpoch})`, held_cpu_millis: ONE.cpu });
    // mv-1's pending create rows are closed; a create row per admission goes to mv-2 under a new key.
    const rows = await ledger.db.execute('SELECT reservation_id, cluster, dedupe_key, done_at IS NOT NULL AS done, last_error FROM outbox WHERE tenant = ? ORDER BY seq', [T]);
    expect(rows.rows.filter((r) => r.cluster === 'mv-1').map((r) => [Number(r.done), r.last_error])).toEqual(ids.map(() => [1, 'moved to mv-2']));
    expect(rows.rows.filter((r) => r.cluster === 'mv-2').map((r) => [r.dedupe_key, Number(r.done)]).sort()).toEqual(ids.map((id) => [`create:${id}:2`, 0]).sort());
    const moves = await ledger.db.execute("SELECT reservation_id, placement_seq, cluster, cpu_millis, note FROM quota_movement WHERE tenant = ? AND direction = 'move'", [T]);
    expect(moves.rows).toHaveLength(3);
    for (const m of moves.rows) expect({ ...m, cpu_millis: Number(m.cpu_millis) }).toMatchObject({ placement_seq: 2, cluster: 'mv-2', cpu_millis: ONE.cpu, note: `from mv-1 (lost at epoch ${lostEpoch}) by sup-a` });
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);

    // The lost cluster's controller, fenced at its epoch, can no longer change a moved admission.
    expect(await transition(ledger.db, { tenant: T, id: ids[0]! }, ['admitted', 'delivered', 'ready'], 'releasing', ctlEpoch, new Date(), null)).toBe(false);
    // The target's controller releases it, and the room freed is the target's; the stranded room stays.
    const target = await acquireEpoch(ledger.db, 'mv-2', 'ctl-mv-2', new Date());
    await ensureFence(ledger.db, T, 'mv-2', target, 'ctl-mv-2', new Date());
    await deleteAdmission(ledger.deps(), T, ids[0]!, 'del-1');
    expect(await transition(ledger.db, { tenant: T, id: ids[0]! }, ['deleting'], 'releasing', target, new Date(), null)).toBe(true);
    expect(await release(ledger.db, { tenant: T, id: ids[0]! }, target, new Date())).toBe(true);
    expect(sumOf(await readAllAllotments(ledger.db, anchors, 'mv-2'), 'reserved')).toEqual({ cpu: 2 * ONE.cpu, modelservices: 2 });
    expect(sumOf(await readAllAllotments(ledger.db, anchors, 'mv-1'), 'stranded')).toEqual({ cpu: 3 * ONE.cpu, modelservices: 3 });
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });

  it('two runners racing for the same admissions: each moved once', async () => {
    const { lostEpoch } = await lostWith(4);
    const found = await page('mv-1');
    const outcomes = await Promise.all(found.flatMap((m) => [move(m, lostEpoch, 'sup-a'), move(m, lostEpoch, 'sup-b')]));
    expect(outcomes.filter((o) => o.kind === 'moved')).toHaveLength(4);
    expect(outcomes.filter((o) => o.kind !== 'moved')).toEqual(Array.from({ length: 4 }, () => ({ kind: 'unchanged', why: expect.any(String) })));
    expect(await ledger.count("SELECT COUNT(*) FROM quota_movement WHERE tenant = ? AND direction = 'move'", [T])).toBe(4);
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });

  it('a runner that saw the admission at an older placement, or after a delete, moves nothing', async () => {
    const { ids, lostEpoch } = await lostWith(2);
    const found = await page('mv-1');
    const a = found.find((m) => m.id === ids[0]);
    const b = found.find((m) => m.id === ids[1]);
    await deleteAdmission(ledger.deps(), T, b!.id, 'del-b');
    const before = await ledger.fingerprint();
    expect(await move({ ...a!, seq: 0 }, lostEpoch)).toMatchObject({ kind: 'unchanged' });
    expect(await move(b!, lostEpoch)).toMatchObject({ kind: 'unchanged' }); // deleting: it waits for mv-1 (or a forget)
    expect(await ledger.fingerprint()).toBe(before);
  });

  it("the lost cluster back in service (the operator's ready): a paused runner moves nothing", async () => {
    const { lostEpoch } = await lostWith(1);
    const [m] = await page('mv-1');
    expect(await acquireClusterEpoch(ledger.db, { cluster: 'mv-1', holder: 'ctl-back', now: new Date() })).toMatchObject({ kind: 'taken', state: 'lost' });
    await changeClusterState(ctx, { name: 'mv-1', action: 'ready' });
    const before = await ledger.fingerprint();
    expect(await move(m!, lostEpoch)).toEqual({ kind: 'unchanged', why: "mv-1 is no longer lost on the tenant's shard" });
    expect(await ledger.fingerprint()).toBe(before);
  });

  it("freeing (T9): the lost cluster's current leader frees a stranded placement once; a deposed one, or another cluster's, frees nothing", async () => {
    const { ids, lostEpoch } = await lostWith(2);
    for (const m of await page('mv-1')) expect(await move(m, lostEpoch)).toMatchObject({ kind: 'moved' });
    const key = { tenant: T, id: ids[0]! };
    const deposed = await acquireEpoch(ledger.db, 'mv-1', 'ctl-old', new Date());
    await ensureFence(ledger.db, T, 'mv-1', deposed, 'ctl-old', new Date());
    const leader = await acquireEpoch(ledger.db, 'mv-1', 'ctl-new', new Date());
    await ensureFence(ledger.db, T, 'mv-1', leader, 'ctl-new', new Date());
    const other = await acquireEpoch(ledger.db, 'mv-2', 'ctl-mv-2', new Date());
    await ensureFence(ledger.db, T, 'mv-2', other, 'ctl-mv-2', new Date());
    const strandedIds = async () => (await Promise.all((await ledgerShards(ledger.db)).map((s) => strandedPage(shardDb(ledger.db, s.name), { cluster: 'mv-1', after: null, limit: 10 })))).flat().map((k) => k.id).sort();
    expect(await strandedIds()).toEqual([...ids].sort());
    const [left] = await placementsLeft(ledger.db, key, 'mv-1');
    expect(left).toMatchObject({ seq: 1, state: 'stranded', held: ONE });
    const before = await ledger.fingerprint();
    expect(await freeStranded(ledger.db, key, 'mv-1', left!, deposed, new Date())).toBe(false);
    expect(await freeStranded(ledger.db, key, 'mv-2', left!, other, new Date())).toBe(false); // not its placement
    expect(await ledger.fingerprint()).toBe(before);
    expect(await freeStranded(ledger.db, key, 'mv-1', left!, leader, new Date())).toBe(true);
    expect(await freeStranded(ledger.db, key, 'mv-1', left!, leader, new Date())).toBe(false); // once
    expect(await placementsLeft(ledger.db, key, 'mv-1')).toEqual([expect.objectContaining({ state: 'freed' })]);
    expect(sumOf(await readAllAllotments(ledger.db, anchors, 'mv-1'), 'stranded')).toEqual({ cpu: ONE.cpu, modelservices: 1 });
    expect(await strandedIds()).toEqual([ids[1]]);
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });

  it("forget (T10): a lost cluster given up: its stranded room given up, its deleting admission released with the reason, its running one moved with its room freed there; a re-run changes nothing", async () => {
    const { ids, lostEpoch } = await lostWith(3);
    const [strandedOne, deleting, running] = ids as [string, string, string];
    const found = await page('mv-1');
    expect(await move(found.find((m) => m.id === strandedOne)!, lostEpoch)).toMatchObject({ kind: 'moved', to: 'mv-2' });
    await deleteAdmission(ledger.deps(), T, deleting, 'del-f');
    const quotaBefore = await quotaRows();
    const r = await forgetCluster(ctx, { name: 'mv-1', reason: 'region closed' });
    expect(r).toMatchObject({ changed: true, from: 'lost', strandedForgotten: 1, released: 1, cluster: { state: 'forgotten', epoch: lostEpoch + 1 } });
    expect((await readAudit(ledger.db, 'mv-1', 1))[0]).toMatchObject({ action: 'forget', reason: 'region closed', epoch: lostEpoch + 1 });
    for (const a of await readAllAllotments(ledger.db, anchors, 'mv-1')) expect(a.mode).toBe('forgotten');
    expect(await placementsLeft(ledger.db, { tenant: T, id: strandedOne }, 'mv-1')).toEqual([expect.objectContaining({ state: 'forgotten' })]);
    const rel = await ledger.db.execute("SELECT state, last_error FROM reservation WHERE tenant = ? AND id = ?", [T, deleting]);
    expect(rel.rows[0]).toMatchObject({ state: 'released', last_error: 'forgotten: region closed' });
    expect(await ledger.count("SELECT COUNT(*) FROM quota_movement WHERE tenant = ? AND reservation_id = ? AND direction = 'release' AND note = 'forgotten: region closed'", [T, deleting])).toBe(1);
    // The deleting admission's charge given back; the others' unchanged.
    const after = await quotaRows();
    const cpuUsed = (rows: typeof after) => Number(rows.find((q) => q.resource === 'cpu')?.used);
    expect(cpuUsed(after)).toBe(cpuUsed(quotaBefore) - ONE.cpu);
    // The running one moves: the room on the forgotten cluster given back, not stranded.
    const [m] = await page('mv-1');
    expect(m?.id).toBe(running);
    expect(await move(m!, lostEpoch + 1)).toEqual({ kind: 'moved', to: 'mv-2', seq: 2 });
    expect(await placementsLeft(ledger.db, { tenant: T, id: running }, 'mv-1')).toEqual([expect.objectContaining({ state: 'forgotten' })]);
    const rows = await readAllAllotments(ledger.db, anchors, 'mv-1');
    expect([sumOf(rows, 'reserved'), sumOf(rows, 'stranded')]).toEqual([{ cpu: 0, modelservices: 0 }, { cpu: 0, modelservices: 0 }]);
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
    // A re-run: already forgotten, nothing left to give up or release.
    const before = await ledger.fingerprint();
    expect(await forgetCluster(ctx, { name: 'mv-1', reason: 'again' })).toMatchObject({ changed: false, strandedForgotten: 0, released: 0 });
    expect(await ledger.fingerprint()).toBe(before);
    // Its controller cannot take it over again.
    expect(await acquireClusterEpoch(ledger.db, { cluster: 'mv-1', holder: 'ctl-back', now: new Date() })).toMatchObject({ kind: 'refused' });
  });

  it('forget is refused, writing nothing, for a ready cluster, a draining one that still holds room, and without a reason', async () => {
    await ready('mv-1', 600_000);
    await submit();
    const before = await ledger.fingerprint();
    await expect(forgetCluster(ctx, { name: 'mv-1', reason: 'x' })).rejects.toThrow(/drain it first/);
    await expect(forgetCluster(ctx, { name: 'mv-1', reason: '  ' })).rejects.toThrow(/reason is required/);
    await changeClusterState(ctx, { name: 'mv-1', action: 'drain' });
    const drained = await ledger.fingerprint();
    expect(drained).not.toBe(before);
    await expect(forgetCluster(ctx, { name: 'mv-1', reason: 'x' })).rejects.toThrow(/still hold room/);
    expect(await ledger.fingerprint()).toBe(drained);
  });

  it("a `lost` whose supervisor died before the shards followed: no move yet, nothing written; the next supervisor's pass brings the shards along and moves it", async () => {
    const { ids, lostEpoch } = await lostWith(1, { diesAfterLost: true });
    expect(await readCluster(ledger.db, 'mv-1')).toMatchObject({ state: 'lost', epoch: lostEpoch });
    const [m] = await page('mv-1');
    const before = await ledger.fingerprint();
    expect(await move(m!, lostEpoch)).toEqual({ kind: 'unchanged', why: "mv-1 is no longer lost on the tenant's shard" });
    expect(await ledger.fingerprint()).toBe(before);
    const supervise = createSupervisor({
      ledger: supervisorLedger(ledger.db, { runner: 'sup-b', now: () => new Date(), placer: createPlacer() }),
      metrics: supervisorMetrics(new Registry()),
      log: createLogger({ level: 'error', write: () => undefined }),
      ownCluster: 'mv-2',
    });
    expect(await supervise(new AbortController().signal)).toEqual({ marked: [], moved: [{ id: ids[0], to: 'mv-2' }] });
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });

  it('no open cluster with room: it stays on the lost cluster, nothing written, and moves once room appears', async () => {
    const { lostEpoch } = await lostWith(1);
    await changeClusterState(ctx, { name: 'mv-2', action: 'drain' });
    const [m] = await page('mv-1');
    const before = await ledger.fingerprint();
    expect(await move(m!, lostEpoch)).toEqual({ kind: 'no-room' });
    expect(await ledger.fingerprint()).toBe(before);
    await changeClusterState(ctx, { name: 'mv-2', action: 'ready' });
    expect(await move(m!, lostEpoch)).toEqual({ kind: 'moved', to: 'mv-2', seq: 2 });
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });
});
