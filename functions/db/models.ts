// SQL of the inference routes: the two reads an OpenAI-style client needs — is this admission the
// caller's, and in which state (every inference request, so a DELETE refuses the next call at
// once: no cache), and which of its admissions are ready (GET /v1/models). Both name the tenant:
// single-shard on Vitess (docs/vitess-statements.md). No URLs here: the app builds them.
import type { ReservationState } from '../../schema/admission.ts';
import { str, time } from '../../ledger/columns.ts';
import type { Queryable } from '../../ledger/db.ts';
import { reservationState } from '../../ledger/rows.ts';

/** The most models GET /v1/models lists: a bound on one response, far above what a tenant's quota runs. */
export const MODEL_LIST_LIMIT = 1000;

export interface ReadyModel {
  id: string;
  name: string;
  /** RFC 3339 */
  createdAt: string;
}

/** The state of the tenant's admission `id`, or undefined (missing, or another tenant's: the same answer). */
export async function modelState(q: Queryable, tenant: string, id: string): Promise<ReservationState | undefined> {
  const r = await q.execute('SELECT state FROM reservation WHERE tenant = ? AND id = ?', [tenant, id]);
  const row = r.rows[0];
  return row ? reservationState(row.state) : undefined;
}

/**
 * The tenant's ready admissions, newest first, at most `limit`: one range of (state, tenant) read
 * backwards through ix_reservation_state_tenant, whatever else the tenant ever admitted.
 */
export async function readyModels(q: Queryable, tenant: string, limit = MODEL_LIST_LIMIT): Promise<ReadyModel[]> {
  const r = await q.execute(
    `SELECT id, name, created_at FROM reservation FORCE INDEX (ix_reservation_state_tenant)
      WHERE state = 'ready' AND tenant = ? ORDER BY id DESC LIMIT ?`,
    [tenant, limit],
  );
  return r.rows.map((row) => ({ id: str(row.id), name: str(row.name), createdAt: time(row.created_at) }));
}
