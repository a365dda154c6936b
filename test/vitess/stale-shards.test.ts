// A shard list older than a reshard, on the run's 2-shard Vitess ledger: a placer that still
// believes the keyspace is one shard computes the anchor `~a0` for every tenant, but `~a0` lives on
// 80-. An admission (or a dequeue) of a tenant on -80 then reaches a second shard at its room's
// UPDATE: vtgate refuses it (1317, transaction mode SINGLE), the transaction rolls back, the placer
// drops its list (forgetShards), and the retry, on the fresh list's anchor, commits — once, with
// the room on the tenant's own shard and the ledger clean (docs/multi-cluster.md, "Anchors").
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { admit } from '../../functions/services/admit.ts';
import { deleteAdmission } from '../../functions/services/requests.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { release } from '../../controller/reservation/quota-moves.ts';
import { transition } from '../../controller/reservation/transitions.ts';
import { anchorsOf, shardOfTenant, type ShardAnchor } from '../../ledger/anchors.ts';
import { createPlacer } from '../../ledger/placement.ts';
import { dequeueTenant } from '../../ledger/queue.ts';
import { ledgerShards, type ShardReader } from '../../ledger/shards.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { readyCluster } from '../support/clusters.ts';
import { createLedgerDatabase, emptyLedger, type LedgerDatabase } from '../support/ledger-database.ts';
import { admissionOf } from '../support/policy.ts';

let L: LedgerDatabase;
let anchors: ShardAnchor[];
beforeAll(async () => {
  L = await createLedgerDatabase();
  if (L.backend !== 'vitess') throw new Error('test/vitess/stale-shards.test.ts runs in the vitess project (MODELDOCK_LEDGER_BACKEND=vitess)');
  anchors = anchorsOf(await ledgerShards(L.db));
});
afterAll(async () => {
  if (L) await emptyLedger(L.db);
  await L?.drop();
});
beforeEach(async () => {
  await emptyLedger(L.db);
  await readyCluster(L.db, 'c1', { cpu: 8000, memory: 16_384, 'nvidia.com/gpu': 0, modelservices: 4 });
});

/** A shard list that says "one shard" until forgotten, then reads the real one; counts the forgets. */
function staleShards(): ShardReader & { forgotten: number } {
  let stale = true;
  const reader = async (db: Parameters<ShardReader>[0]) => (stale ? [{ name: '', db, roundTrips: 1 as const }] : ledgerShards(db));
  const out = Object.assign(reader, {
    forgotten: 0,
    forget: () => {
      stale = false;
      out.forgotten++;
    },
  });
  return out;
}

/** A fresh tenant whose shard's anchor is not `~a0` (the one-shard anchor), with quota for one admission. */
async function tenantOffTheStaleAnchor(prefix: string): Promise<{ tenant: string; anchor: string }> {
  for (let i = 0; ; i++) {
    const tenant = `${prefix}-${i}`;
    const anchor = anchors.find((a) => a.shard.name === shardOfTenant(anchors.map((x) => x.shard), tenant).name)!.anchor;
    if (anchor === '~a0') continue;
    await L.setQuota(tenant, 'cpu=1', 'memory=1Gi', 'modelservices=1');
    return { tenant, anchor };
  }
}

let seq = 0;
const submit = (deps: ReturnType<LedgerDatabase['deps']>, tenant: string, queue = false) =>
  admit(deps, {
    tenant,
    idempotencyKey: `stale-${++seq}`,
    requestId: `stale-${seq}`,
    parsed: admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '1', memory: '1Gi' }, ...(queue ? { onShortQuota: 'queue' } : {}) }),
  });
const roomOf = async (tenant: string, id: string) =>
  (await L.db.execute('SELECT cluster, room_anchor FROM reservation WHERE tenant = ? AND id = ?', [tenant, id])).rows[0];

describe('a shard list older than a reshard', () => {
  it('an admission refused as cross-shard is retried on the fresh list: one admission, its room on its own shard', async () => {
    const { tenant, anchor } = await tenantOffTheStaleAnchor('stale-a');
    const shards = staleShards();
    const { outcome, admission } = await submit({ ...L.deps(), placer: createPlacer({ shards }) }, tenant);
    expect(outcome).toBe('created');
    expect(shards.forgotten).toBe(1);
    expect(await roomOf(tenant, admission.id)).toEqual({ cluster: 'c1', room_anchor: anchor });
    expect(await L.count('SELECT COUNT(*) AS n FROM reservation WHERE tenant = ?', [tenant])).toBe(1);
    expect(await checkLedger(L.db, null, undefined)).toEqual([]);
  });

  it('a dequeue refused as cross-shard re-reads the list once and admits the head', async () => {
    const { tenant, anchor } = await tenantOffTheStaleAnchor('stale-q');
    const first = (await submit(L.deps(), tenant)).admission;
    const waiting = (await submit(L.deps(), tenant, true)).admission;
    expect(waiting.state).toBe('queued');
    const epoch = await acquireEpoch(L.db, 'c1', 'stale-test', new Date()); // the controller of c1, where the admissions are placed
    await deleteAdmission(L.deps(), tenant, first.id, `del-${first.id}`);
    expect(await transition(L.db, { tenant, id: first.id }, ['deleting'], 'releasing', epoch, new Date(), null)).toBe(true);
    expect(await release(L.db, { tenant, id: first.id }, epoch, new Date())).toBe(true);
    const shards = staleShards();
    const moved = await dequeueTenant(L.db, tenant, { by: { side: 'controller', cluster: 'c1', epoch }, now: () => new Date(), requestId: 'stale-dq', placer: createPlacer({ shards }) });
    expect(moved.admitted.map((a) => a.id)).toEqual([waiting.id]);
    expect(shards.forgotten).toBe(1);
    expect(await roomOf(tenant, waiting.id)).toEqual({ cluster: 'c1', room_anchor: anchor });
    expect(await checkLedger(L.db, null, undefined)).toEqual([]);
  });
});
