// The supervisor's `lost` (ledger/cluster-failover.ts, docs/multi-cluster.md T6) against the real
// ledger (MariaDB, or the 2-shard Vitess keyspace): a ready or draining cluster whose heartbeat is
// older than its lease — by the database's clock — becomes lost with a new epoch, its audit row and
// every shard's allotment closed to placements; its controller's next heartbeat is superseded. A
// heartbeat within the lease, a takeover since, a joining cluster and racing supervisors change
// nothing more. The Worker's cron does the same when no controller runs.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ShardAnchor } from '../../ledger/anchors.ts';
import { acquireClusterEpoch, heartbeat } from '../../ledger/cluster-epoch.ts';
import { markLost, overdueClusters } from '../../ledger/cluster-failover.ts';
import { readAllAllotments, readAudit, readCluster } from '../../ledger/cluster-store.ts';
import { admit } from '../../functions/services/admit.ts';
import { sweep } from '../../functions/services/sweep.ts';
import { admissionOf } from '../support/policy.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { addCluster, changeClusterState, type AdminContext } from '../../scripts/operator/cluster-admin.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { closeClusterLedger, openClusterLedger } from '../support/clusters.ts';
import { emptyLedger, type LedgerDatabase } from '../support/ledger-database.ts';
import { waitFor } from '../support/wait.ts';

let ledger: LedgerDatabase;
let anchors: ShardAnchor[];
let ctx: AdminContext;
const CAP: Amounts = { cpu: 8_000, memory: 16_384, 'nvidia.com/gpu': 0, modelservices: 8 };
/** The shortest lease `add` takes: the tests wait it out on the database's clock. */
const SHORT = 1_000;

beforeAll(async () => ({ ledger, anchors, ctx } = await openClusterLedger()));
afterAll(() => closeClusterLedger(ledger));
beforeEach(async () => {
  await emptyLedger(ledger.db);
  await ledger.setQuota('fo-t', 'cpu=8', 'memory=16Gi', 'modelservices=8');
});

/** Registers `name` and takes it over (its controller's first heartbeat): ready at epoch 1. */
async function ready(name: string, leaseMs: number): Promise<void> {
  await addCluster(ctx, { name, capacity: CAP, leaseMs });
  expect(await acquireClusterEpoch(ledger.db, { cluster: name, holder: `ctl-${name}`, now: new Date() })).toMatchObject({ kind: 'taken', epoch: 1, state: 'ready' });
}
const lose = (cluster: string, seenEpoch: number, runner = 'sup-a') => markLost(ledger.db, { cluster, seenEpoch, runner, now: new Date() });
const untilOverdue = (name: string) =>
  waitFor(`${name}'s heartbeat to run out`, async () => ((await overdueClusters(ledger.db)).some((c) => c.name === name) ? true : undefined), { timeoutMs: 10_000, intervalMs: 100 });
let seq = 0;
const submit = () =>
  admit(ledger.deps(), { tenant: 'fo-t', idempotencyKey: `fo-${++seq}`, requestId: `r-${seq}`, parsed: admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '500m', memory: '512Mi' } }) });

describe('lost', () => {
  it("a heartbeat older than the lease: lost at the next epoch, audited with the runner, every shard's allotment lost, placements go elsewhere, its controller superseded", async () => {
    await ready('fo-1', SHORT);
    await ready('fo-2', 600_000);
    await untilOverdue('fo-1');
    expect(await overdueClusters(ledger.db)).toEqual([{ name: 'fo-1', epoch: 1 }]);
    const r = await lose('fo-1', 1);
    expect(r).toMatchObject({ kind: 'lost', epoch: 2 });
    expect(r.kind === 'lost' && r.heartbeatAgeMs).toBeGreaterThan(SHORT);
    expect(await readCluster(ledger.db, 'fo-1')).toMatchObject({ state: 'lost', epoch: 2, version: 3 });
    expect((await readAudit(ledger.db, 'fo-1', 1))[0]).toMatchObject({ action: 'lost', actor: 'sup-a', epoch: 2 });
    const modes = await readAllAllotments(ledger.db, anchors, 'fo-1');
    expect(modes).toHaveLength(anchors.length);
    for (const a of modes) expect(a).toMatchObject({ mode: 'lost', modeVersion: 3 });
    expect(await overdueClusters(ledger.db)).toEqual([]);

    for (let i = 0; i < 3; i++) expect((await submit()).admission.cluster).toBe('fo-2');
    expect(await heartbeat(ledger.db, { cluster: 'fo-1', epoch: 1, holder: 'ctl-fo-1' })).toEqual({ kind: 'superseded', epoch: 2, state: 'lost' });
    expect(await checkLedger(ledger.db, null, undefined)).toEqual([]);
  });

  it('a draining cluster is lost the same way', async () => {
    await ready('fo-1', SHORT);
    await changeClusterState(ctx, { name: 'fo-1', action: 'drain' });
    await untilOverdue('fo-1');
    expect(await lose('fo-1', 1)).toMatchObject({ kind: 'lost', epoch: 2 });
    expect((await readAudit(ledger.db, 'fo-1', 1))[0]?.detail).toContain('"from":"draining"');
  });

  it('a heartbeat within the lease changes nothing (no false failover)', async () => {
    await ready('fo-2', 600_000);
    const before = await ledger.fingerprint();
    expect(await overdueClusters(ledger.db)).toEqual([]);
    expect(await lose('fo-2', 1)).toEqual({ kind: 'unchanged', why: 'its heartbeat is within the lease' });
    expect(await ledger.fingerprint()).toBe(before);
  });

  it('a cluster taken over since the supervisor saw it overdue is left alone', async () => {
    await ready('fo-1', SHORT);
    await untilOverdue('fo-1');
    const [seen] = await overdueClusters(ledger.db);
    expect(await acquireClusterEpoch(ledger.db, { cluster: 'fo-1', holder: 'ctl-back', now: new Date() })).toMatchObject({ epoch: 2 });
    const before = await ledger.fingerprint();
    expect(await lose('fo-1', seen!.epoch)).toMatchObject({ kind: 'unchanged' });
    expect(await ledger.fingerprint()).toBe(before);
  });

  it('a joining cluster (no controller yet) is never lost', async () => {
    await addCluster(ctx, { name: 'fo-3', capacity: CAP, leaseMs: SHORT });
    await new Promise((r) => setTimeout(r, SHORT + 300));
    expect(await overdueClusters(ledger.db)).toEqual([]);
    const before = await ledger.fingerprint();
    expect(await lose('fo-3', 0)).toEqual({ kind: 'unchanged', why: 'it is joining' });
    expect(await ledger.fingerprint()).toBe(before);
  });

  it("the cron marks a cluster lost when no controller does, and brings every cluster's shards to its state", async () => {
    await ready('fo-1', SHORT);
    await ready('fo-2', 600_000);
    // A fixture standing in for an operator's drain whose process died after its global commit, before its shards.
    await ledger.db.execute("UPDATE cluster SET state = 'draining', version = version + 1 WHERE name = 'fo-2'");
    await untilOverdue('fo-1');
    const run = await sweep(ledger.deps(), { cron: '*/1 * * * *', scheduledTime: Date.now(), staleAfterMs: 3_600_000, pageSize: 100, maxStatements: 200, holder: 'cron-test' });
    expect(run).toMatchObject({ claimed: true, lost: 1 });
    expect(await readCluster(ledger.db, 'fo-1')).toMatchObject({ state: 'lost', epoch: 2 });
    expect((await readAudit(ledger.db, 'fo-1', 1))[0]).toMatchObject({ action: 'lost', actor: expect.stringMatching(/^cron:/) });
    for (const a of await readAllAllotments(ledger.db, anchors, 'fo-1')) expect(a.mode).toBe('lost');
    for (const a of await readAllAllotments(ledger.db, anchors, 'fo-2')) expect(a).toMatchObject({ mode: 'draining', modeVersion: 3 });
  });

  it('four supervisors racing: lost once, one audit row, one epoch more', async () => {
    await ready('fo-1', SHORT);
    await untilOverdue('fo-1');
    const results = await Promise.all(['sup-a', 'sup-b', 'sup-c', 'sup-d'].map((runner) => lose('fo-1', 1, runner)));
    expect(results.filter((r) => r.kind === 'lost')).toHaveLength(1);
    expect(await readCluster(ledger.db, 'fo-1')).toMatchObject({ state: 'lost', epoch: 2, version: 3 });
    expect((await readAudit(ledger.db, 'fo-1')).filter((a) => a.action === 'lost')).toHaveLength(1);
  });
});
