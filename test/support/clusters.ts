// A registered cluster made ready for placement tests: the operator's `add`, then its controller's
// first takeover (joining → ready, every shard's allotment opens; ledger/cluster-epoch.ts).
import type { Amounts } from '../../schema/model-service.ts';
import { ledgerAnchors, type ShardAnchor } from '../../ledger/anchors.ts';
import { acquireClusterEpoch } from '../../ledger/cluster-epoch.ts';
import type { Db } from '../../ledger/db.ts';
import { addCluster, type AdminContext } from '../../scripts/operator/cluster-admin.ts';
import { createLedgerDatabase, emptyLedger, type LedgerDatabase } from './ledger-database.ts';

/** A cluster suite's ledger (MariaDB, or the Vitess keyspace), its shards' anchors and an operator's context. */
export async function openClusterLedger(actor = 'ops-alice'): Promise<{ ledger: LedgerDatabase; anchors: ShardAnchor[]; ctx: AdminContext }> {
  const ledger = await createLedgerDatabase();
  return { ledger, anchors: await ledgerAnchors(ledger.db), ctx: { db: ledger.db, actor, now: () => new Date() } };
}

/** A registered cluster places every later admission: a cluster suite leaves none for the suites after it (Vitess shares one ledger). */
export async function closeClusterLedger(ledger: LedgerDatabase | undefined): Promise<void> {
  if (ledger) await emptyLedger(ledger.db);
  await ledger?.drop();
}

export async function readyCluster(db: Db, name: string, capacity: Amounts, actor = 'ops-test', leaseMs?: number): Promise<void> {
  await addCluster({ db, actor, now: () => new Date() }, { name, capacity, ...(leaseMs === undefined ? {} : { leaseMs }) });
  const taken = await acquireClusterEpoch(db, { cluster: name, holder: `controller-${name}`, now: new Date() });
  if (taken.kind !== 'taken' || taken.state !== 'ready') throw new Error(`cluster ${name} not ready: ${JSON.stringify(taken)}`);
}
