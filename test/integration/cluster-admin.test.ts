// The operator's cluster commands against the real ledger (MariaDB, or the 2-shard Vitess keyspace
// with MODELDOCK_LEDGER_BACKEND=vitess; docs/multi-cluster.md step 2): `add` puts a cluster's
// capacity in escrow (pool + one allotment per shard, through the grant saga), `drain`/`ready`
// change its state with an audit row and every shard's allotment follows, a refused command writes
// nothing, a crash between the saga's steps is completed by a re-run or `resume` with nothing
// granted twice, and the checker sees a broken allotment or capacity.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Amounts } from '../../schema/model-service.ts';
import type { ShardAnchor } from '../../ledger/anchors.ts';
import { applyGrant, applyReclaim, finishMove, finishReclaim, grant, reclaim, recordGrant, recordReclaim, resumeMoves } from '../../ledger/allotment-moves.ts';
import { acquireClusterEpoch } from '../../ledger/cluster-epoch.ts';
import { readAllAllotments, readAudit, readCluster, sumOf, syncModes } from '../../ledger/cluster-store.ts';
import { spreadCapacity } from '../../ledger/clusters.ts';
import { amountArgs, prefixedAmountColumns, RESOURCE_NAMES } from '../../ledger/resources.ts';
import { addCluster, changeClusterState, ClusterRefused, rebalanceCluster, setClusterCapacity, type AdminContext } from '../../scripts/operator/cluster-admin.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { emptyLedger, ledgerBackend, type LedgerDatabase } from '../support/ledger-database.ts';
import { closeClusterLedger, openClusterLedger } from '../support/clusters.ts';

let ledger: LedgerDatabase;
let anchors: ShardAnchor[];
let ctx: AdminContext;
const CAP: Amounts = { cpu: 64_000, memory: 262_144, 'nvidia.com/gpu': 7, modelservices: 10 };
const ZERO: Amounts = { cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 };

beforeAll(async () => ({ ledger, anchors, ctx } = await openClusterLedger()));
afterAll(() => closeClusterLedger(ledger));
// Each test starts from an empty ledger: the cluster tables are global, so names would collide.
beforeEach(async () => {
  if (ledger.backend === 'vitess') return emptyLedger(ledger.db);
  for (const t of ['cluster', 'cluster_audit', 'allotment_move', 'cluster_allotment', 'allotment_log']) await ledger.db.execute(`DELETE FROM ${t}`);
});

const allotmentsOf = (name: string) => readAllAllotments(ledger.db, anchors, name);
/** The checker's findings, but `cluster-reserved`: here `reserved` is a fixture standing in for admissions (test/integration/placement.test.ts checks it with real ones). */
const drift = async () => (await checkLedger(ledger.db, null, undefined)).filter((d) => d.check !== 'cluster-reserved');
/** A fixture: the cluster's pool holds exactly `pool`, its capacity grown or shrunk to match (the allotments unchanged). */
async function setPool(name: string, pool: Amounts): Promise<void> {
  const allotted = sumOf(await allotmentsOf(name), 'allotted');
  const cap = (r: keyof Amounts) => allotted[r] + pool[r];
  await ledger.db.execute(
    `UPDATE cluster SET ${prefixedAmountColumns('pool').split(', ').map((c) => `${c} = ?`).join(', ')}, ${prefixedAmountColumns('capacity').split(', ').map((c) => `${c} = ?`).join(', ')} WHERE name = ?`,
    [...amountArgs(pool), ...RESOURCE_NAMES.map(cap), name],
  );
}
/** Its controller's first takeover: joining → ready, epoch 1 (ledger/cluster-epoch.ts). */
const takeOver = (name: string) => acquireClusterEpoch(ledger.db, { cluster: name, holder: 'controller-eu-1', now: new Date() });
/** A test fixture standing in for writers not built yet (the supervisor's `lost`, the operator's `forget`). */
const force = (name: string, state: string) => ledger.db.execute('UPDATE cluster SET state = ?, version = version + 1 WHERE name = ?', [state, name]);

describe('add', () => {
  it('puts the capacity in escrow: all of it on one shard (MariaDB), 75 % over two and 25 % in the pool (Vitess)', async () => {
    const r = await addCluster(ctx, { name: 'eu-1', capacity: CAP, reason: 'first region' });
    expect(r.created).toBe(true);
    expect(r.cluster).toMatchObject({ state: 'joining', version: 1, epoch: 0, leaseMs: 15_000, capacity: CAP });
    const rows = await allotmentsOf('eu-1');
    if (ledger.backend === 'mariadb') {
      expect(anchors.map((a) => a.anchor)).toEqual(['~a0']);
      expect(r.cluster.pool).toEqual(ZERO);
      expect(rows.map((a) => a.allotted)).toEqual([CAP]);
    } else {
      expect(anchors).toHaveLength(2);
      expect(r.cluster.pool).toEqual({ cpu: 16_000, memory: 65_536, 'nvidia.com/gpu': 3, modelservices: 4 });
      const each = { cpu: 24_000, memory: 98_304, 'nvidia.com/gpu': 2, modelservices: 3 };
      expect(rows.map((a) => a.allotted)).toEqual([each, each]);
    }
    // Every shard's row is closed (joining takes no placement), reserved and stranded nothing.
    expect(rows.map((a) => a.anchor).sort()).toEqual(anchors.map((a) => a.anchor).sort());
    for (const a of rows) expect(a).toMatchObject({ mode: 'closed', modeVersion: 1, reserved: ZERO, stranded: ZERO });
    expect(await ledger.count("SELECT COUNT(*) FROM allotment_move WHERE cluster = 'eu-1' AND state = 'done'")).toBe(anchors.length);
    expect((await readAudit(ledger.db, 'eu-1')).map((e) => [e.action, e.actor, e.reason, e.epoch])).toEqual([['add', 'ops-alice', 'first region', 0]]);
    expect(await drift()).toEqual([]);
  });

  it('a re-run with the same definition changes nothing; with another, or of a cluster past joining, it is refused', async () => {
    await addCluster(ctx, { name: 'eu-1', capacity: CAP });
    const before = await ledger.fingerprint();
    expect((await addCluster(ctx, { name: 'eu-1', capacity: CAP })).created).toBe(false);
    expect(await ledger.fingerprint()).toBe(before);
    await expect(addCluster(ctx, { name: 'eu-1', capacity: { ...CAP, cpu: 1000 } })).rejects.toThrow(ClusterRefused);
    await expect(addCluster(ctx, { name: 'eu-1', capacity: CAP, leaseMs: 30_000 })).rejects.toThrow(/exists \(joining, epoch 0\)/);
    await takeOver('eu-1');
    const ready = await ledger.fingerprint();
    await expect(addCluster(ctx, { name: 'eu-1', capacity: CAP })).rejects.toThrow(/exists \(ready/);
    expect(await ledger.fingerprint()).toBe(ready);
  });

  it.each([
    ['a name that is not a DNS label', { name: 'EU_1', capacity: CAP }, /not a cluster name/],
    ['no capacity', { name: 'eu-1', capacity: ZERO }, /no capacity/],
    ['a negative amount', { name: 'eu-1', capacity: { ...CAP, memory: -1 } }, /memory must be a whole amount/],
    ['a fractional amount', { name: 'eu-1', capacity: { ...CAP, 'nvidia.com/gpu': 0.5 } }, /nvidia.com\/gpu must be a whole amount/],
    ['a lease under 1 s', { name: 'eu-1', capacity: CAP, leaseMs: 999 }, /at least 1 s/],
  ])('refuses %s and writes nothing', async (_, o, message) => {
    const before = await ledger.fingerprint();
    await expect(addCluster(ctx, o)).rejects.toThrow(message);
    await expect(addCluster(ctx, o)).rejects.toThrow(ClusterRefused);
    expect(await ledger.fingerprint()).toBe(before);
  });

  it('a crash after the pool gave (G1) or after the shard took (G2) is completed by a re-run, nothing granted twice', async () => {
    await addCluster(ctx, { name: 'eu-1', capacity: CAP });
    const done = await allotmentsOf('eu-1');
    const pool = (await readCluster(ledger.db, 'eu-1'))?.pool;
    // Replay the same add's moves as a crash would have left them: undo G2/G3 on the first anchor, G3 on the last.
    const first = anchors[0]!.anchor;
    const last = anchors[anchors.length - 1]!.anchor;
    const moveOf = async (anchor: string) => String((await ledger.db.execute("SELECT id FROM allotment_move WHERE cluster = 'eu-1' AND anchor = ?", [anchor])).rows[0]?.id);
    const firstMove = await moveOf(first);
    const want = done.find((a) => a.anchor === first)!.allotted;
    await ledger.db.execute('DELETE FROM allotment_log WHERE anchor = ? AND move_id = ?', [first, firstMove]);
    await ledger.db.execute(
      'UPDATE cluster_allotment SET allotted_cpu_millis = allotted_cpu_millis - ?, allotted_memory_mib = allotted_memory_mib - ?, allotted_gpu = allotted_gpu - ?, allotted_modelservices = allotted_modelservices - ? WHERE anchor = ? AND cluster = ?',
      [want.cpu, want.memory, want['nvidia.com/gpu'], want.modelservices, first, 'eu-1'],
    );
    await ledger.db.execute("UPDATE allotment_move SET state = 'pending', done_at = NULL WHERE cluster = 'eu-1'");
    // In flight, the capacity is still whole: the checker counts a pending grant without its log row.
    expect(await drift()).toEqual([]);
    expect((await addCluster(ctx, { name: 'eu-1', capacity: CAP })).created).toBe(false);
    expect(await allotmentsOf('eu-1')).toEqual(done);
    expect((await readCluster(ledger.db, 'eu-1'))?.pool).toEqual(pool);
    expect(await ledger.count("SELECT COUNT(*) FROM allotment_move WHERE cluster = 'eu-1' AND state = 'pending'")).toBe(0);
    expect(await ledger.count('SELECT COUNT(*) FROM allotment_log WHERE anchor = ?', [last])).toBe(1);
    expect(await drift()).toEqual([]);
  });
});

describe('the grant saga', () => {
  const small: Amounts = { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 1 };

  it('resume rolls a grant left after G1 forward, once; a second resume finds nothing', async () => {
    await addCluster(ctx, { name: 'c1', capacity: CAP });
    // Room in the pool on MariaDB too (one shard is granted everything at add).
    await setPool('c1', small);
    const anchor = anchors[0]!.anchor;
    const before = (await allotmentsOf('c1')).find((a) => a.anchor === anchor)!.allotted;
    expect(await recordGrant(ledger.db, { id: 'g-crash', cluster: 'c1', anchor, want: small, by: 'test' }, new Date())).toBe('granted');
    expect(await drift()).toEqual([]);
    const later = () => new Date(Date.now() + 60_000);
    expect(await resumeMoves(ledger.db, { olderThanMs: 30_000, now: later })).toBe(1);
    expect(await resumeMoves(ledger.db, { olderThanMs: 30_000, now: later })).toBe(0);
    expect(await applyGrant(ledger.db, { id: 'g-crash', cluster: 'c1', anchor, want: small }, new Date())).toBe(false);
    const after = (await allotmentsOf('c1')).find((a) => a.anchor === anchor)!.allotted;
    expect(after.cpu - before.cpu).toBe(1000);
    expect(after.modelservices - before.modelservices).toBe(1);
    expect(await drift()).toEqual([]);
  });

  it('grants racing for a pool that holds one of them: exactly one is granted, the capacity stays exact', async () => {
    await addCluster(ctx, { name: 'c1', capacity: CAP });
    await setPool('c1', small);
    expect(await drift()).toEqual([]);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => grant(ledger.db, { id: `race-${i}`, cluster: 'c1', anchor: anchors[i % anchors.length]!.anchor, want: small, by: 'test' }, () => new Date())),
    );
    expect(outcomes.filter((o) => o === 'granted')).toHaveLength(1);
    expect((await readCluster(ledger.db, 'c1'))!.pool).toEqual(ZERO);
    expect(await ledger.count("SELECT COUNT(*) FROM allotment_move WHERE id LIKE 'race-%'")).toBe(1);
    expect(await drift()).toEqual([]);
  });
});

describe('crash points of the sagas: a resume yields the exact capacity, and the interrupted run finishing later changes nothing', () => {
  const small: Amounts = { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 1, modelservices: 1 };
  const minus = (a: Amounts, b: Amounts): Amounts => ({ cpu: a.cpu - b.cpu, memory: a.memory - b.memory, 'nvidia.com/gpu': a['nvidia.com/gpu'] - b['nvidia.com/gpu'], modelservices: a.modelservices - b.modelservices });
  const plus = (a: Amounts, b: Amounts): Amounts => minus(a, minus(ZERO, b));

  // Each row: the steps that committed before the crash, and the steps the interrupted run would still take.
  const points = [
    ['grant after G1', 'grant', 1],
    ['grant after G2', 'grant', 2],
    ['reclaim after R1', 'reclaim', 1],
    ['reclaim after R2', 'reclaim', 2],
  ] as const;
  it.each(points)('%s', async (_, direction, committed) => {
    await addCluster(ctx, { name: 'c1', capacity: CAP });
    if (direction === 'grant') await setPool('c1', small);
    const anchor = anchors[anchors.length - 1]!.anchor;
    const allottedBefore = (await allotmentsOf('c1')).find((a) => a.anchor === anchor)!.allotted;
    const poolBefore = (await readCluster(ledger.db, 'c1'))!.pool;
    const m = { id: `crash-${direction}-${committed}`, cluster: 'c1', anchor, want: small, by: 'test' };
    const steps =
      direction === 'grant'
        ? [() => recordGrant(ledger.db, m, new Date()), () => applyGrant(ledger.db, m, new Date()), () => finishMove(ledger.db, m.id, new Date())]
        : [() => recordReclaim(ledger.db, m, new Date()), async () => applyReclaim(ledger.db, m, new Date()), async () => finishReclaim(ledger.db, m, small, new Date())];
    for (const step of steps.slice(0, committed)) await step();
    expect(await drift()).toEqual([]);
    const later = () => new Date(Date.now() + 60_000);
    expect(await resumeMoves(ledger.db, { olderThanMs: 30_000, now: later })).toBe(1);
    expect(await resumeMoves(ledger.db, { olderThanMs: 30_000, now: later })).toBe(0);
    for (const step of steps.slice(committed)) await step();
    const sign = direction === 'grant' ? plus : minus;
    expect((await allotmentsOf('c1')).find((a) => a.anchor === anchor)!.allotted).toEqual(sign(allottedBefore, small));
    expect((await readCluster(ledger.db, 'c1'))!.pool).toEqual(direction === 'grant' ? minus(poolBefore, small) : plus(poolBefore, small));
    expect(await ledger.count('SELECT COUNT(*) FROM allotment_log WHERE anchor = ? AND move_id = ?', [anchor, m.id])).toBe(1);
    expect(await drift()).toEqual([]);
  });

  it('a reclaim the slack does not cover moves nothing and says so (what runs there keeps its room)', async () => {
    await addCluster(ctx, { name: 'c1', capacity: CAP });
    const anchor = anchors[0]!.anchor;
    await ledger.db.execute('UPDATE cluster_allotment SET reserved_cpu_millis = allotted_cpu_millis - 999 WHERE anchor = ? AND cluster = ?', [anchor, 'c1']);
    const before = { allotments: await allotmentsOf('c1'), pool: (await readCluster(ledger.db, 'c1'))!.pool };
    expect(await reclaim(ledger.db, { id: 'r-short', cluster: 'c1', anchor, want: small, by: 'test' }, () => new Date())).toEqual(ZERO);
    expect({ allotments: await allotmentsOf('c1'), pool: (await readCluster(ledger.db, 'c1'))!.pool }).toEqual(before);
    expect(await ledger.count("SELECT COUNT(*) FROM allotment_move WHERE id = 'r-short' AND state = 'done'")).toBe(1);
    expect(await drift()).toEqual([]);
  });

  it('grants and reclaims racing on every shard keep the capacity exact', async () => {
    await addCluster(ctx, { name: 'c1', capacity: CAP });
    await setPool('c1', { cpu: 4000, memory: 4096, 'nvidia.com/gpu': 0, modelservices: 4 });
    const unit: Amounts = { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 1 };
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const m = { id: `mix-${i}`, cluster: 'c1', anchor: anchors[i % anchors.length]!.anchor, want: unit, by: 'test' };
        return i % 3 === 2 ? reclaim(ledger.db, m, () => new Date()).then((a) => (a.cpu > 0 ? 'reclaimed' : 'nothing')) : grant(ledger.db, m, () => new Date());
      }),
    );
    // 8 grants race for 4 units in the pool plus whatever the 4 reclaims give back first.
    const reclaimed = results.filter((r) => r === 'reclaimed').length;
    expect(reclaimed).toBe(4);
    expect(results.filter((r) => r === 'granted').length).toBeGreaterThanOrEqual(4);
    const c = (await readCluster(ledger.db, 'c1'))!;
    const allotted = sumOf(await allotmentsOf('c1'), 'allotted');
    for (const r of RESOURCE_NAMES) expect(c.pool[r] + allotted[r], r).toBe(c.capacity[r]);
    expect(await ledger.count("SELECT COUNT(*) FROM allotment_move WHERE id LIKE 'mix-%' AND state = 'pending'")).toBe(0);
    expect(await drift()).toEqual([]);
  });
});

describe('rebalance', () => {
  it('brings a shard that gave capacity back up to its share from the pool, with an audit row', async () => {
    const added = await addCluster(ctx, { name: 'eu-1', capacity: CAP });
    const spread = await allotmentsOf('eu-1');
    const anchor = anchors[0]!.anchor;
    const give: Amounts = { cpu: 3000, memory: 0, 'nvidia.com/gpu': 1, modelservices: 0 };
    expect(await reclaim(ledger.db, { id: 'skew', cluster: 'eu-1', anchor, want: give, by: 'test' }, () => new Date())).toEqual(give);
    const r = await rebalanceCluster(ctx, { name: 'eu-1', reason: 'skewed' });
    expect(r).toMatchObject({ reclaimed: ZERO, granted: give });
    expect(await allotmentsOf('eu-1')).toEqual(spread);
    expect(r.cluster.pool).toEqual(added.cluster.pool);
    expect((await readAudit(ledger.db, 'eu-1', 1))[0]).toMatchObject({ action: 'rebalance', reason: 'skewed', detail: JSON.stringify({ reclaimed: ZERO, granted: give }) });
    expect(await drift()).toEqual([]);
    // Balanced: a second run moves nothing.
    expect(await rebalanceCluster(ctx, { name: 'eu-1' })).toMatchObject({ reclaimed: ZERO, granted: ZERO });
  });

  // One shard (MariaDB) holds the whole capacity as its share: it can never hold more than it.
  it.skipIf(ledgerBackend() !== 'vitess')('takes back what a shard holds above its share, only as far as its free slack goes', async () => {
    await addCluster(ctx, { name: 'eu-1', capacity: CAP });
    const [a0, a1] = anchors.map((a) => a.anchor);
    const extra: Amounts = { cpu: 2000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 1 };
    expect(await reclaim(ledger.db, { id: 'skew-1', cluster: 'eu-1', anchor: a1!, want: extra, by: 'test' }, () => new Date())).toEqual(extra);
    expect(await grant(ledger.db, { id: 'skew-0', cluster: 'eu-1', anchor: a0!, want: extra, by: 'test' }, () => new Date())).toBe('granted');
    // What runs on a0 leaves it 500 m of free cpu: only that much cpu can go back.
    await ledger.db.execute('UPDATE cluster_allotment SET reserved_cpu_millis = allotted_cpu_millis - 500 WHERE anchor = ? AND cluster = ?', [a0!, 'eu-1']);
    const r = await rebalanceCluster(ctx, { name: 'eu-1' });
    expect(r.reclaimed).toEqual({ cpu: 500, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 1 });
    expect(r.granted).toEqual({ cpu: 2000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 1 });
    const rows = await allotmentsOf('eu-1');
    expect(rows.find((a) => a.anchor === a0)!.allotted.cpu).toBe(24_000 + 1500);
    expect(rows.find((a) => a.anchor === a1)!.allotted.cpu).toBe(24_000);
    expect(await drift()).toEqual([]);
  });

  it('refuses an unknown cluster', async () => {
    await expect(rebalanceCluster(ctx, { name: 'nowhere' })).rejects.toThrow(ClusterRefused);
  });
});

describe('capacity', () => {
  beforeEach(async () => {
    await addCluster(ctx, { name: 'eu-1', capacity: CAP });
  });
  /** The escrow as add would have spread `capacity` (per anchor, in the anchors' order, and the pool). */
  const spreadOf = async (capacity: Amounts) => {
    const s = spreadCapacity(capacity, anchors.length);
    const rows = await allotmentsOf('eu-1');
    return { want: { pool: s.pool, allotted: s.grants }, got: { pool: (await readCluster(ledger.db, 'eu-1'))!.pool, allotted: anchors.map((a) => rows.find((x) => x.anchor === a.anchor)!.allotted) } };
  };

  it('a raise goes to the pool and is spread over the shards, with audit rows', async () => {
    const r = await setClusterCapacity(ctx, { name: 'eu-1', capacity: { 'nvidia.com/gpu': 11 }, reason: 'new cards' });
    expect(r.changed).toBe(true);
    expect(r.cluster.capacity).toEqual({ ...CAP, 'nvidia.com/gpu': 11 });
    const { want, got } = await spreadOf(r.cluster.capacity);
    expect(got).toEqual(want);
    expect((await readAudit(ledger.db, 'eu-1', 2)).map((e) => [e.action, e.reason])).toEqual([
      ['rebalance', 'new cards'],
      ['capacity', 'new cards'],
    ]);
    expect(await drift()).toEqual([]);
  });

  it('a cut takes the shards’ free slack back to the pool first, then lowers the capacity and spreads what is left', async () => {
    const r = await setClusterCapacity(ctx, { name: 'eu-1', capacity: { cpu: 32_000 } });
    expect(r.cluster.capacity).toEqual({ ...CAP, cpu: 32_000 });
    const { want, got } = await spreadOf(r.cluster.capacity);
    expect(got).toEqual(want);
    expect(await drift()).toEqual([]);
  });

  it('refuses a cut the pool and the free slack cannot cover, and writes nothing', async () => {
    await ledger.onEveryShard("UPDATE cluster_allotment SET reserved_cpu_millis = allotted_cpu_millis WHERE cluster = 'eu-1'");
    const pool = (await readCluster(ledger.db, 'eu-1'))!.pool.cpu;
    const before = await ledger.fingerprint();
    await expect(setClusterCapacity(ctx, { name: 'eu-1', capacity: { cpu: CAP.cpu - pool - 1 } })).rejects.toThrow(`cpu can go down by at most ${pool}`);
    expect(await ledger.fingerprint()).toBe(before);
    // The pool alone covers a cut of what it holds.
    if (pool > 0) expect((await setClusterCapacity(ctx, { name: 'eu-1', capacity: { cpu: CAP.cpu - pool } })).cluster.pool.cpu).toBe(0);
  });

  it('the same capacity changes nothing; a bad amount or an unknown cluster is refused', async () => {
    const before = await ledger.fingerprint();
    expect(await setClusterCapacity(ctx, { name: 'eu-1', capacity: { cpu: CAP.cpu } })).toMatchObject({ changed: false });
    await expect(setClusterCapacity(ctx, { name: 'eu-1', capacity: { memory: -1 } })).rejects.toThrow(/memory must be a whole amount/);
    await expect(setClusterCapacity(ctx, { name: 'eu-1', capacity: ZERO })).rejects.toThrow(/no capacity/);
    await expect(setClusterCapacity(ctx, { name: 'nowhere', capacity: { cpu: 1 } })).rejects.toThrow(ClusterRefused);
    expect(await ledger.fingerprint()).toBe(before);
  });
});

describe('drain and ready', () => {
  beforeEach(async () => {
    await addCluster(ctx, { name: 'eu-1', capacity: CAP });
  });

  it('ready → draining → ready: an audit row each, every shard follows, a repeat writes nothing', async () => {
    await takeOver('eu-1');
    const d = await changeClusterState(ctx, { name: 'eu-1', action: 'drain', reason: 'kernel upgrade' });
    expect(d).toMatchObject({ changed: true, from: 'ready', cluster: { state: 'draining', epoch: 1, version: 3 } });
    for (const a of await allotmentsOf('eu-1')) expect(a).toMatchObject({ mode: 'draining', modeVersion: 3 });
    const drained = await ledger.fingerprint();
    expect(await changeClusterState(ctx, { name: 'eu-1', action: 'drain' })).toMatchObject({ changed: false });
    expect(await ledger.fingerprint()).toBe(drained);
    const r = await changeClusterState(ctx, { name: 'eu-1', action: 'ready' });
    expect(r).toMatchObject({ changed: true, from: 'draining', cluster: { state: 'ready', epoch: 1, version: 4 } });
    for (const a of await allotmentsOf('eu-1')) expect(a).toMatchObject({ mode: 'open', modeVersion: 4 });
    expect((await readAudit(ledger.db, 'eu-1')).map((e) => [e.action, e.reason, e.detail && JSON.parse(e.detail)])).toEqual([
      ['ready', null, { from: 'draining', to: 'ready' }],
      ['drain', 'kernel upgrade', { from: 'ready', to: 'draining' }],
      ['joined', null, { from: 'joining', to: 'ready' }],
      ['add', null, { capacity: CAP, leaseMs: 15_000, shards: anchors.length }],
    ]);
    expect(await drift()).toEqual([]);
  });

  it('a shard never takes an older state’s mode (a late sync of the drain after the ready changes nothing)', async () => {
    await takeOver('eu-1');
    const drained = (await changeClusterState(ctx, { name: 'eu-1', action: 'drain' })).cluster;
    await changeClusterState(ctx, { name: 'eu-1', action: 'ready' });
    expect(await syncModes(ledger.db, anchors, drained, new Date())).toBe(0);
    for (const a of await allotmentsOf('eu-1')) expect(a.mode).toBe('open');
  });

  it('lost → ready only with a fresh heartbeat and nothing stranded, at the same epoch (the controller back keeps it)', async () => {
    await force('eu-1', 'lost');
    const lost = await ledger.fingerprint();
    await expect(changeClusterState(ctx, { name: 'eu-1', action: 'ready' })).rejects.toThrow(/heartbeat/);
    // A heartbeat older than the lease is not fresh (the database's clock decides).
    await ledger.db.execute('UPDATE cluster SET heartbeat_at = TIMESTAMPADD(SECOND, -16, UTC_TIMESTAMP(3)) WHERE name = ?', ['eu-1']);
    const stale = await ledger.fingerprint();
    await expect(changeClusterState(ctx, { name: 'eu-1', action: 'ready' })).rejects.toThrow(/heartbeat/);
    expect(await ledger.fingerprint()).toBe(stale);
    expect(stale).not.toBe(lost);
    await ledger.db.execute('UPDATE cluster SET heartbeat_at = UTC_TIMESTAMP(3) WHERE name = ?', ['eu-1']);
    const anchor = anchors[anchors.length - 1]!.anchor;
    await ledger.db.execute('UPDATE cluster_allotment SET stranded_gpu = 1 WHERE anchor = ? AND cluster = ?', [anchor, 'eu-1']);
    const stranded = await ledger.fingerprint();
    await expect(changeClusterState(ctx, { name: 'eu-1', action: 'ready' })).rejects.toThrow(/stranded/);
    expect(await ledger.fingerprint()).toBe(stranded);
    await ledger.db.execute('UPDATE cluster_allotment SET stranded_gpu = 0 WHERE anchor = ? AND cluster = ?', [anchor, 'eu-1']);
    const r = await changeClusterState(ctx, { name: 'eu-1', action: 'ready', reason: 'controller back' });
    expect(r).toMatchObject({ changed: true, from: 'lost', cluster: { state: 'ready', epoch: 0 } });
    expect((await readAudit(ledger.db, 'eu-1', 1))[0]).toMatchObject({ action: 'ready', epoch: 0, reason: 'controller back' });
  });

  it.each([
    ['drain a joining cluster', 'joining', 'drain', /joining cluster cannot be drained/],
    ['ready a joining cluster', 'joining', 'ready', /first takes it over/],
    ['drain a lost cluster', 'lost', 'drain', /lost cluster cannot be drained/],
    ['ready a forgotten cluster', 'forgotten', 'ready', /add it again/],
  ] as const)('refuses to %s and writes nothing', async (_, state, action, message) => {
    if (state !== 'joining') await force('eu-1', state);
    const before = await ledger.fingerprint();
    await expect(changeClusterState(ctx, { name: 'eu-1', action })).rejects.toThrow(message);
    await expect(changeClusterState(ctx, { name: 'eu-1', action })).rejects.toThrow(ClusterRefused);
    expect(await ledger.fingerprint()).toBe(before);
  });

  it('refuses an unknown cluster', async () => {
    await expect(changeClusterState(ctx, { name: 'nowhere', action: 'drain' })).rejects.toThrow(/no cluster named nowhere/);
  });
});

describe('the checker', () => {
  beforeEach(async () => {
    await addCluster(ctx, { name: 'eu-1', capacity: CAP });
  });

  it('reports an allotment whose reserved + stranded exceeds what it was allotted', async () => {
    const anchor = anchors[0]!.anchor;
    await ledger.db.execute('UPDATE cluster_allotment SET reserved_gpu = allotted_gpu, stranded_gpu = 1 WHERE anchor = ? AND cluster = ?', [anchor, 'eu-1']);
    expect(await drift()).toEqual([
      // No placement left on it holds that stranded room (the checker's cluster-stranded).
      { check: 'cluster-stranded', cluster: 'eu-1', detail: `anchor ${anchor}: nvidia.com/gpu: stranded 1, stranded placements hold 0` },
      { check: 'allotment-bounds', cluster: 'eu-1', detail: expect.stringContaining(`anchor ${anchor}: nvidia.com/gpu`) },
    ]);
  });

  it('reports capacity that is neither in the pool, nor allotted, nor in flight', async () => {
    await ledger.db.execute('UPDATE cluster SET pool_memory_mib = pool_memory_mib + 1 WHERE name = ?', ['eu-1']);
    expect(await drift()).toEqual([{ check: 'cluster-capacity', cluster: 'eu-1', detail: `memory: pool + allotted + in flight = ${CAP.memory + 1}, capacity ${CAP.memory}` }]);
    // Not a settled check: a move between the global keyspace and a shard would look like this mid-read.
    expect(await checkLedger(ledger.db, null, undefined, { settled: false })).toEqual([]);
  });
});
