// The Worker's outbox statements: it only ever inserts (and purges acknowledged rows); the
// controller claims and acknowledges (controller/reservation/outbox-store.ts). Kinds and dedupe keys:
// ledger/outbox.ts.
import type { Queryable } from '../../ledger/db.ts';
import type { OutboxKind } from '../../ledger/outbox.ts';

export interface OutboxInsert {
  /** The reservation's tenant: the row's shard on a ledger sharded by tenant. */
  tenant: string;
  reservationId: string;
  kind: OutboxKind;
  dedupeKey: string;
  requestId: string | null;
}

/**
 * Deletes up to `limit` rows acknowledged before `before` (dead and pending rows are kept). One
 * statement, on ONE shard (`q` is a shard's Db, ledger/shards.ts): it names no tenant.
 */
export async function purgeDone(q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.execute('DELETE FROM outbox WHERE done_at IS NOT NULL AND done_at < ? ORDER BY seq LIMIT ?', [before, limit]);
  return r.rowsAffected;
}

/**
 * Inserts rows of ONE tenant (one single-shard statement; vtgate gives each its seq from the
 * global sequence); rows whose dedupe_key exists are skipped. Returns rows inserted.
 */
export async function enqueue(q: Queryable, rows: readonly OutboxInsert[], now: Date): Promise<number> {
  if (rows.length === 0) return 0;
  const tenant = rows[0]!.tenant;
  if (rows.some((r) => r.tenant !== tenant)) throw new Error('enqueue: one tenant per statement (the ledger is sharded by tenant)');
  const values = rows.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ');
  const args = rows.flatMap((r) => [r.tenant, r.reservationId, r.kind, now, r.dedupeKey, r.requestId, now]);
  const r = await q.execute(
    `INSERT INTO outbox (tenant, reservation_id, kind, available_at, dedupe_key, request_id, created_at) VALUES ${values}
     ON DUPLICATE KEY UPDATE seq = seq`,
    args,
  );
  return r.rowsAffected;
}
