// A registered cluster made ready for placement tests: the operator's `add`, then its controller's
// first takeover (joining → ready, every shard's allotment opens; ledger/cluster-epoch.ts).
import type { Amounts } from '../../schema/model-service.ts';
import { acquireClusterEpoch } from '../../ledger/cluster-epoch.ts';
import type { Db } from '../../ledger/db.ts';
import { addCluster } from '../../scripts/operator/cluster-admin.ts';

export async function readyCluster(db: Db, name: string, capacity: Amounts, actor = 'ops-test'): Promise<void> {
  await addCluster({ db, actor, now: () => new Date() }, { name, capacity });
  const taken = await acquireClusterEpoch(db, { cluster: name, holder: `controller-${name}`, now: new Date() });
  if (taken.kind !== 'taken' || taken.state !== 'ready') throw new Error(`cluster ${name} not ready: ${JSON.stringify(taken)}`);
}
