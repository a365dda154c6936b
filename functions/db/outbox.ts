// The Worker's purge of acknowledged outbox rows. Rows are inserted through ledger/outbox.ts
// (the Worker's admissions and the dequeue of either side); the controller claims and acknowledges
// them (controller/reservation/outbox-store.ts).
import type { Queryable } from '../../ledger/db.ts';

/**
 * Deletes up to `limit` rows acknowledged before `before` (dead and pending rows are kept). One
 * statement, on ONE shard (`q` is a shard's Db, ledger/shards.ts): it names no tenant.
 */
export async function purgeDone(q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.execute('DELETE FROM outbox WHERE done_at IS NOT NULL AND done_at < ? ORDER BY seq LIMIT ?', [before, limit]);
  return r.rowsAffected;
}
