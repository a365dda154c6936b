// A registered cluster made ready for placement tests: the operator's `add`, then the state change
// a controller's first takeover will make (issue 33 step 5, not built yet: here a labelled fixture),
// then the allotments' modes synced on every shard.
import type { Amounts } from '../../schema/model-service.ts';
import { ledgerAnchors } from '../../ledger/anchors.ts';
import { readCluster, syncModes } from '../../ledger/cluster-store.ts';
import type { Db } from '../../ledger/db.ts';
import { addCluster } from '../../scripts/operator/cluster-admin.ts';

export async function readyCluster(db: Db, name: string, capacity: Amounts, actor = 'ops-test'): Promise<void> {
  await addCluster({ db, actor, now: () => new Date() }, { name, capacity });
  await db.execute("UPDATE cluster SET state = 'ready', version = version + 1 WHERE name = ?", [name]);
  await syncModes(db, await ledgerAnchors(db), (await readCluster(db, name))!, new Date());
}
