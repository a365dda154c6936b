// SQL of a change of replicas (PATCH /requests/:id): the reservation_change row that records it
// (and its Idempotency-Key), and the guarded move of the reservation to its next generation. No
// business rules here: functions/services/scale.ts decides, these statements execute.
import type { Amounts, ModelServiceSpec } from '../../schema/model-service.ts';
import { ACTIVE_STATES } from '../../schema/admission.ts';
import { int, str } from '../../ledger/columns.ts';
import type { Queryable } from '../../ledger/db.ts';
import { AMOUNT_COLUMNS, RESOURCE_NAMES } from '../../ledger/resources.ts';

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

/**
 * Moves the reservation from generation `from` to `from + 1` with the new spec, adding `charge`
 * to its amounts (an increase's delta; zeros for a decrease, refunded later by the controller).
 * Only while it runs (admitted, delivered, ready), is still at `from`, and has no unsettled
 * change: true when this call moved it.
 */
export async function advanceGeneration(
  q: Queryable,
  a: { tenant: string; id: string; from: number; spec: ModelServiceSpec; charge: Amounts; now: Date },
): Promise<boolean> {
  const adds = RESOURCE_NAMES.map((r) => `${AMOUNT_COLUMNS[r]} = ${AMOUNT_COLUMNS[r]} + ?`).join(', ');
  const r = await q.execute(
    `UPDATE reservation SET spec = ?, generation = generation + 1, ${adds}, updated_at = ?
      WHERE tenant = ? AND id = ? AND generation = ? AND settled_generation = generation AND state IN (?)`,
    [JSON.stringify(a.spec), ...RESOURCE_NAMES.map((r) => a.charge[r]), a.now, a.tenant, a.id, a.from, [...ACTIVE_STATES]],
  );
  return r.rowsAffected === 1;
}
