// SQL of the reservation_change table: the row that records a change of replicas (PATCH
// /requests/:id) and its Idempotency-Key. The reservation's own move to its next generation is
// in reservations.ts (the one Worker writer of `reservation`). No business rules here:
// functions/services/scale.ts decides, these statements execute.
import { int, str } from '../../ledger/columns.ts';
import type { Queryable } from '../../ledger/db.ts';

/**
 * The generation of a change row that changed nothing (PATCH to the replicas it already had): it
 * binds the Idempotency-Key only, and no reservation's generation (≥ 1) ever joins it.
 */
export const NOOP_GENERATION = 0;

export interface NewChange {
  tenant: string;
  reservationId: string;
  generation: number;
  idempotencyKey: string;
  requestHash: string;
  fromReplicas: number;
  toReplicas: number;
  requestId: string;
  now: Date;
}

export async function insertChange(q: Queryable, c: NewChange): Promise<void> {
  await q.execute(
    `INSERT INTO reservation_change (tenant, reservation_id, generation, idempotency_key, request_hash, from_replicas, to_replicas, request_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [c.tenant, c.reservationId, c.generation, c.idempotencyKey, c.requestHash, c.fromReplicas, c.toReplicas, c.requestId, c.now],
  );
}

/** The change an Idempotency-Key made on this admission, if any. */
export async function findChangeByKey(q: Queryable, tenant: string, reservationId: string, key: string): Promise<{ generation: number; requestHash: string } | undefined> {
  const r = await q.execute('SELECT generation, request_hash FROM reservation_change WHERE tenant = ? AND reservation_id = ? AND idempotency_key = ?', [
    tenant,
    reservationId,
    key,
  ]);
  const row = r.rows[0];
  return row ? { generation: int(row.generation), requestHash: str(row.request_hash) } : undefined;
}
