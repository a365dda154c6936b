// A cluster's own controller in the ledger (ledger/cluster-epoch.ts) against the real ledger
// (MariaDB, or the 2-shard Vitess keyspace with MODELDOCK_LEDGER_BACKEND=vitess): its takeover
// makes a joining cluster ready (audit row, every shard's allotment opens, so admissions are placed
// there), every takeover is a new epoch, the heartbeat renews only at the current epoch, and a
// takeover the ledger refuses writes nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Amounts } from '../../schema/model-service.ts';
import type { ShardAnchor } from '../../ledger/anchors.ts';
import { acquireClusterEpoch, heartbeat } from '../../ledger/cluster-epoch.ts';
import { readAllAllotments, readAudit, readCluster } from '../../ledger/cluster-store.ts';
import { int } from '../../ledger/columns.ts';
import { addCluster, changeClusterState, type AdminContext } from '../../scripts/operator/cluster-admin.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { emptyLedger, type LedgerDatabase } from '../support/ledger-database.ts';
import { closeClusterLedger, openClusterLedger } from '../support/clusters.ts';

let ledger: LedgerDatabase;
let anchors: ShardAnchor[];
let ctx: AdminContext;
const CAP: Amounts = { cpu: 8_000, memory: 16_384, 'nvidia.com/gpu': 0, modelservices: 4 };

beforeAll(async () => ({ ledger, anchors, ctx } = await openClusterLedger()));
afterAll(() => closeClusterLedger(ledger));
beforeEach(async () => {
  await emptyLedger(ledger.db);
  await addCluster(ctx, { name: 'eu-1', capacity: CAP, leaseMs: 6_000 });
});

const take = (holder: string) => acquireClusterEpoch(ledger.db, { cluster: 'eu-1', holder, now: new Date() });
const beat = (epoch: number, holder = 'controller-a') => heartbeat(ledger.db, { cluster: 'eu-1', epoch, holder });
/** The heartbeat's age by the database's clock, in ms (null: none yet). */
async function heartbeatAgeMs(): Promise<number | null> {
  const row = (await ledger.db.execute('SELECT TIMESTAMPDIFF(MICROSECOND, heartbeat_at, UTC_TIMESTAMP(3)) AS age FROM cluster WHERE name = ?', ['eu-1'])).rows[0];
  return row?.age === null || row?.age === undefined ? null : int(row.age) / 1000;
}
const holderOf = async () => (await ledger.db.execute('SELECT holder, heartbeat_by FROM cluster WHERE name = ?', ['eu-1'])).rows[0];

describe('takeover', () => {
  it("the first one makes a joining cluster ready: epoch 1, its `joined` audit row, every shard's allotment opens", async () => {
    for (const a of await readAllAllotments(ledger.db, anchors, 'eu-1')) expect(a.mode).toBe('closed');
    expect(await heartbeatAgeMs()).toBeNull();
    expect(await take('controller-a')).toEqual({ kind: 'taken', epoch: 1, state: 'ready', leaseMs: 6_000, joined: true });
    expect(await readCluster(ledger.db, 'eu-1')).toMatchObject({ state: 'ready', version: 2, epoch: 1, heartbeatBy: 'controller-a' });
    expect(await holderOf()).toEqual({ holder: 'controller-a', heartbeat_by: 'controller-a' });
    expect(await heartbeatAgeMs()).toBeLessThan(6_000);
    const rows = await readAllAllotments(ledger.db, anchors, 'eu-1');
    expect(rows).toHaveLength(anchors.length);
    for (const a of rows) expect(a).toMatchObject({ mode: 'open', modeVersion: 2 });
    expect((await readAudit(ledger.db, 'eu-1', 1))[0]).toMatchObject({ action: 'joined', actor: 'controller-a', epoch: 1, detail: JSON.stringify({ from: 'joining', to: 'ready' }) });
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });

  it('a later one (a new leader) is a new epoch and keeps the state: no audit row, no state change, modes untouched', async () => {
    await take('controller-a');
    const audits = (await readAudit(ledger.db, 'eu-1')).length;
    expect(await take('controller-b')).toEqual({ kind: 'taken', epoch: 2, state: 'ready', leaseMs: 6_000, joined: false });
    expect(await readCluster(ledger.db, 'eu-1')).toMatchObject({ state: 'ready', version: 2, epoch: 2, heartbeatBy: 'controller-b' });
    expect(await readAudit(ledger.db, 'eu-1')).toHaveLength(audits);
    for (const a of await readAllAllotments(ledger.db, anchors, 'eu-1')) expect(a).toMatchObject({ mode: 'open', modeVersion: 2 });
  });

  it('a draining cluster stays draining', async () => {
    await take('controller-a');
    await changeClusterState(ctx, { name: 'eu-1', action: 'drain' });
    expect(await take('controller-b')).toMatchObject({ kind: 'taken', epoch: 2, state: 'draining', joined: false });
    for (const a of await readAllAllotments(ledger.db, anchors, 'eu-1')) expect(a.mode).toBe('draining');
  });

  it('racing takeovers each get an epoch of their own, and only the last one renews', async () => {
    const holders = ['c-1', 'c-2', 'c-3', 'c-4'];
    const taken = await Promise.all(holders.map((h) => take(h)));
    const epochs = taken.map((t) => (t.kind === 'taken' ? t.epoch : 0));
    expect([...epochs].sort()).toEqual([1, 2, 3, 4]);
    expect(taken.filter((t) => t.kind === 'taken' && t.joined)).toHaveLength(1);
    expect((await readAudit(ledger.db, 'eu-1')).filter((a) => a.action === 'joined')).toHaveLength(1);
    const beats = await Promise.all(holders.map((h, i) => beat(epochs[i]!, h)));
    expect(beats.map((b) => b.kind)).toEqual(epochs.map((e) => (e === 4 ? 'renewed' : 'superseded')));
  });

  it('a crash after the takeover committed, before the shards followed: the next takeover opens them', async () => {
    await take('controller-a');
    // The state as the crash leaves it: the global row ready, every allotment still closed at the add's version.
    for (const a of anchors) await ledger.db.execute("UPDATE cluster_allotment SET mode = 'closed', mode_version = 1 WHERE anchor = ? AND cluster = ?", [a.anchor, 'eu-1']);
    await take('controller-a');
    for (const a of await readAllAllotments(ledger.db, anchors, 'eu-1')) expect(a).toMatchObject({ mode: 'open', modeVersion: 2 });
  });

  it.each([
    ['a cluster that is not registered', 'eu-9', /no cluster named eu-9/],
    ['a forgotten cluster', 'eu-1', /forgotten: add it again/],
  ])('refuses %s and writes nothing', async (_, name, reason) => {
    // A fixture standing in for `forget` (not built yet: docs/multi-cluster.md step 8).
    await ledger.db.execute("UPDATE cluster SET state = 'forgotten', version = version + 1 WHERE name = 'eu-1'");
    const before = await ledger.fingerprint();
    const t = await acquireClusterEpoch(ledger.db, { cluster: name, holder: 'controller-a', now: new Date() });
    expect(t.kind).toBe('refused');
    expect(t.kind === 'refused' && t.reason).toMatch(reason);
    expect(await ledger.fingerprint()).toBe(before);
  });
});

describe('heartbeat', () => {
  it('renews at the current epoch (the database clock), and is superseded by a newer takeover', async () => {
    await take('controller-a');
    await ledger.db.execute('UPDATE cluster SET heartbeat_at = TIMESTAMPADD(SECOND, -5, UTC_TIMESTAMP(3)) WHERE name = ?', ['eu-1']);
    expect(await heartbeatAgeMs()).toBeGreaterThanOrEqual(5_000);
    expect(await beat(1)).toEqual({ kind: 'renewed' });
    expect(await heartbeatAgeMs()).toBeLessThan(5_000);
    await take('controller-b');
    const before = await ledger.fingerprint();
    expect(await beat(1)).toEqual({ kind: 'superseded', epoch: 2, state: 'ready' });
    expect(await ledger.fingerprint()).toBe(before);
    expect(await holderOf()).toEqual({ holder: 'controller-b', heartbeat_by: 'controller-b' });
  });

  it('is superseded once the cluster was forgotten or removed', async () => {
    await take('controller-a');
    await ledger.db.execute("UPDATE cluster SET state = 'forgotten', version = version + 1 WHERE name = 'eu-1'");
    expect(await beat(1)).toEqual({ kind: 'superseded', epoch: 1, state: 'forgotten' });
    await ledger.db.execute("DELETE FROM cluster WHERE name = 'eu-1'");
    expect(await beat(1)).toEqual({ kind: 'superseded', epoch: null, state: null });
  });

  it("is what the operator's `ready` of a lost cluster waits for: its controller back (a takeover, still lost), then ready at the same epoch, its controller carrying on", async () => {
    await take('controller-a');
    // A fixture standing in for the supervisor's `lost` (docs/multi-cluster.md step 7): the state and a new epoch.
    await ledger.db.execute("UPDATE cluster SET state = 'lost', version = version + 1, epoch = epoch + 1, heartbeat_at = TIMESTAMPADD(SECOND, -60, UTC_TIMESTAMP(3)) WHERE name = 'eu-1'");
    expect(await beat(1)).toMatchObject({ kind: 'superseded', epoch: 2, state: 'lost' });
    await expect(changeClusterState(ctx, { name: 'eu-1', action: 'ready' })).rejects.toThrow(/heartbeat/);
    expect(await take('controller-a2')).toMatchObject({ kind: 'taken', epoch: 3, state: 'lost', joined: false });
    for (const a of await readAllAllotments(ledger.db, anchors, 'eu-1')) expect(a.mode).toBe('lost');
    expect(await changeClusterState(ctx, { name: 'eu-1', action: 'ready', reason: 'controller back' })).toMatchObject({ changed: true, from: 'lost', cluster: { state: 'ready', epoch: 3 } });
    for (const a of await readAllAllotments(ledger.db, anchors, 'eu-1')) expect(a.mode).toBe('open');
    expect(await beat(3, 'controller-a2')).toEqual({ kind: 'renewed' });
  });
});
