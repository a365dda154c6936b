// The fence's rows (ledger/fence.ts): the global epoch a new leader takes, and the
// `tenant_fence` rows of its cluster, one per tenant, raised to it. These statements ARE the fence, so they are not fenced by it:
// a fence row is only ever raised, so a deposed leader running them lowers nothing.
// leader-fence.ts decides when they run.
import type { Db, Queryable } from '../../ledger/db.ts';
import { int } from '../../ledger/columns.ts';
import { ledgerShards } from '../../ledger/shards.ts';

/**
 * Becoming `cluster`'s leader: bump the global epoch (BEGIN, UPDATE, SELECT, COMMIT in the global
 * keyspace: every cluster's leaders draw from it, so no two share an epoch), then raise the
 * cluster's fence of every tenant that has a quota to it, shard by shard (one statement per
 * shard, creating the rows of tenants that had none). Only when every shard is raised is the
 * epoch returned: from then on no write of an older leader of that cluster matches a fence row
 * of those tenants. The fences of other clusters are left as they are.
 */
export async function acquireEpoch(db: Db, cluster: string, holder: string, now: Date): Promise<number> {
  const epoch = await db.transaction(async (tx) => {
    await tx.execute(
      `INSERT INTO controller_epoch (id, epoch, holder, updated_at) VALUES (1, 1, ?, ?)
       ON DUPLICATE KEY UPDATE epoch = epoch + 1, holder = VALUES(holder), updated_at = VALUES(updated_at)`,
      [holder, now],
    );
    const r = await tx.execute('SELECT epoch FROM controller_epoch WHERE id = 1');
    return int(r.rows[0]?.epoch);
  });
  for (const shard of await ledgerShards(db)) await raiseFences(shard.db, cluster, epoch, holder, now);
  return epoch;
}

/** Raises (never lowers) a fence row; the holder and time change only when it is raised. */
const RAISE = `ON DUPLICATE KEY UPDATE
       holder = IF(VALUES(epoch) > tenant_fence.epoch, VALUES(holder), tenant_fence.holder),
       updated_at = IF(VALUES(epoch) > tenant_fence.epoch, VALUES(updated_at), tenant_fence.updated_at),
       epoch = GREATEST(tenant_fence.epoch, VALUES(epoch))`;

/** One shard's takeover: every tenant with a quota row on it gets its fence on `cluster` raised to `epoch`. */
async function raiseFences(shard: Db, cluster: string, epoch: number, holder: string, now: Date): Promise<void> {
  await shard.execute(
    `INSERT INTO tenant_fence (tenant, cluster, epoch, holder, updated_at)
     SELECT DISTINCT q.tenant, ?, ?, ?, ? FROM tenant_quota q
     ${RAISE}`,
    [cluster, epoch, holder, now],
  );
}

/**
 * A tenant met for the first time by this leader (its fence row may be missing: a tenant created
 * after the takeover): raise its fence on `cluster` to `epoch` before acting on it. One single-shard statement.
 * It is part of the fence, not fenced by it: it never lowers a row, so a deposed leader calling
 * it raises nothing above the current epoch.
 */
export async function ensureFence(q: Queryable, tenant: string, cluster: string, epoch: number, holder: string, now: Date): Promise<void> {
  await q.execute(`INSERT INTO tenant_fence (tenant, cluster, epoch, holder, updated_at) VALUES (?, ?, ?, ?, ?) ${RAISE}`, [tenant, cluster, epoch, holder, now]);
}
