// SQL of a change of replicas (or of the autoscaling spec): the reservation's move to its next
// generation and the reservation_change row that records it (with its Idempotency-Key). Two
// writers run it, each in ONE transaction with the outbox `scale` row and, for an increase, the
// charge: the Worker for a tenant's PATCH (functions/services/scale.ts) and the controller's
// autoscaler (ledger/autoscale-change.ts), whose move joins its fence (ledger/fence.ts). No
// business rules here: those modules decide, these statements execute.
import { ACTIVE_STATES } from '../schema/admission.ts';
import type { Amounts, ModelServiceSpec } from '../schema/model-service.ts';
import { int, str } from './columns.ts';
import type { Queryable } from './db.ts';
import { FENCE } from './fence.ts';
import { AMOUNT_COLUMNS, amountArgs, RESOURCE_NAMES } from './resources.ts';

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

export interface GenerationMove {
  tenant: string;
  id: string;
  from: number;
  spec: ModelServiceSpec;
  charge: Amounts;
  now: Date;
  /** The controller's epoch: its move joins the tenant's fence (the Worker's has none). */
  epoch?: number;
}

/**
 * Moves the reservation from generation `from` to `from + 1` with the new spec, adding `charge`
 * to its amounts (an increase's delta; zeros for a decrease, refunded later by the controller).
 * Only while it runs (admitted, delivered, ready), is still at `from`, and has no unsettled
 * change (and, for the controller, its fence still holds its epoch): true when this call moved it.
 */
export async function advanceGeneration(q: Queryable, a: GenerationMove): Promise<boolean> {
  const adds = RESOURCE_NAMES.map((res) => `r.${AMOUNT_COLUMNS[res]} = r.${AMOUNT_COLUMNS[res]} + ?`).join(', ');
  const fence = a.epoch === undefined ? { join: '', args: [] } : { join: FENCE('r'), args: [a.epoch] };
  const r = await q.execute(
    `UPDATE reservation r ${fence.join} SET r.spec = ?, r.generation = r.generation + 1, ${adds}, r.updated_at = ?
      WHERE r.tenant = ? AND r.id = ? AND r.generation = ? AND r.settled_generation = r.generation AND r.state IN (?)`,
    [...fence.args, JSON.stringify(a.spec), ...amountArgs(a.charge), a.now, a.tenant, a.id, a.from, [...ACTIVE_STATES]],
  );
  return r.rowsAffected === 1;
}
