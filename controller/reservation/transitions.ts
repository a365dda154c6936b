// The controller's writes to one reservation's rows (reservation, binding) that move no quota:
// its state changes and the columns it records. Every write is FENCED by the controller epoch:
// it joins the `tenant_fence` row of its tenant and of the row's cluster on `epoch = ?`
// (ledger/fence.ts), so once a new leader has raised the fence, a paused ex-leader's late
// statements match no row and change nothing, and no controller changes a row of another cluster.
// Every state change is conditional on the state it leaves, so running any of them twice changes
// nothing. Every statement names the tenant (the ledger is sharded by tenant).
// The writes that move quota are in quota-moves.ts.
import type { Db, Queryable } from '../../ledger/db.ts';
import { failureColumn } from '../../ledger/columns.ts';
import { FENCE } from '../../ledger/fence.ts';
import type { ReservationState } from '../../schema/admission.ts';
import { LAST_ERROR_MAX_CHARS } from '../../schema/tenant-errors.ts';
import { printableWithin } from '../../schema/text.ts';
import { crashPoint } from '../runtime/crash.ts';
import { commitOrRollback } from './commit-or-rollback.ts';
import type { ReleaseBlocker } from './decide.ts';
import type { ReservationKey } from './key.ts';
import { ack, ClaimLost, type ClaimedRow } from './outbox-store.ts';
import type { Progress } from './progress.ts';

/**
 * Crash gap 2 closed (docs/design.md, "Crash gaps"): in ONE transaction guarded by the claim and the epoch, record the CR identity
 * actually created (binding), move the reservation admitted → delivered (it may have moved to
 * deleting meanwhile: the binding is still recorded so the delete finds it), and mark the row
 * done. Throws ClaimLost (nothing written) when the claim no longer holds.
 */
export async function ackCreate(
  db: Db,
  row: ClaimedRow,
  cr: { namespace: string; name: string; uid: string },
  now: Date,
): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await ack(tx, row, now))) throw new ClaimLost(row.seq);
    await tx.execute(
      `INSERT INTO binding (tenant, reservation_id, cluster, namespace, cr_name, uid, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE uid = COALESCE(uid, VALUES(uid)), updated_at = VALUES(updated_at)`,
      [row.tenant, row.reservationId, row.claim.cluster, cr.namespace, cr.name, cr.uid, now, now],
    );
    await tx.execute(
      `UPDATE reservation SET state = 'delivered', state_changed_at = ?, updated_at = ?, last_reconciled_at = ? WHERE tenant = ? AND id = ? AND state = 'admitted'`,
      [now, now, now, row.tenant, row.reservationId],
    );
    crashPoint('inside-ack-before-commit');
  });
}

/** One delivery's acknowledgement: its claimed row and the CR identity created (or adopted) for it. */
export interface DeliveryAck {
  row: ClaimedRow;
  cr: { namespace: string; name: string; uid: string };
}

/**
 * ackCreate for several deliveries of ONE claim (claimed together: one shard, one epoch), in ONE
 * transaction on `shard` — the claim's shard (ledger/shards.ts shardDb: shard-targeted on Vitess,
 * so the statements that name several tenants stay on that shard). All or nothing: when any of
 * the claims no longer holds, nothing is written and the answer is false (the caller then
 * acknowledges them one by one, so that each learns its own outcome).
 */
export async function ackCreates(shard: Db, acks: readonly DeliveryAck[], now: Date): Promise<boolean> {
  const claim = acks[0]?.row.claim;
  if (!claim || acks.some((a) => a.row.claim.by !== claim.by)) throw new Error('ackCreates: one claim, at least one row');
  const tenants = [...new Set(acks.map((a) => a.row.tenant))];
  return commitOrRollback(shard, async (tx, rollback) => {
    const done = await tx.execute(
      `UPDATE outbox o ${FENCE('o')}
          SET o.done_at = ?, o.claimed_until = NULL, o.last_error = NULL,
              o.dedupe_key = CASE WHEN o.kind = 'reconcile' THEN NULL ELSE o.dedupe_key END
        WHERE o.tenant IN (?) AND o.seq IN (?) AND o.claimed_by = ? AND o.claimed_until >= ? AND o.done_at IS NULL`,
      [claim.epoch, now, tenants, acks.map((a) => a.row.seq), claim.by, now],
    );
    if (done.rowsAffected !== acks.length) return rollback(false);
    await tx.execute(
      `INSERT INTO binding (tenant, reservation_id, cluster, namespace, cr_name, uid, created_at, updated_at) VALUES ${acks.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE uid = COALESCE(uid, VALUES(uid)), updated_at = VALUES(updated_at)`,
      acks.flatMap((a) => [a.row.tenant, a.row.reservationId, claim.cluster, a.cr.namespace, a.cr.name, a.cr.uid, now, now]),
    );
    await tx.execute(
      `UPDATE reservation SET state = 'delivered', state_changed_at = ?, updated_at = ?, last_reconciled_at = ? WHERE tenant IN (?) AND id IN (?) AND state = 'admitted'`,
      [now, now, now, tenants, acks.map((a) => a.row.reservationId)],
    );
    crashPoint('inside-ack-before-commit');
    return true;
  });
}

/**
 * delivered → ready, and ever_ready/first_ready_at on the binding: one transaction of two fenced
 * single-table statements (vtgate does not merge a three-table UPDATE into one shard's route).
 * Only a reservation with a binding moves; a second call changes nothing.
 */
export async function markReady(db: Db, key: ReservationKey, epoch: number, now: Date): Promise<boolean> {
  return commitOrRollback(db, async (tx, rollback) => {
    const moved = await tx.execute(
      `UPDATE reservation r ${FENCE('r')}
            SET r.state = 'ready', r.state_changed_at = ?, r.updated_at = ?
          WHERE r.tenant = ? AND r.id = ? AND r.state = 'delivered'
            AND EXISTS (SELECT 1 FROM binding b WHERE b.tenant = r.tenant AND b.reservation_id = r.id)`,
      [epoch, now, now, key.tenant, key.id],
    );
    if (moved.rowsAffected !== 1) return rollback(false);
    const bound = await tx.execute(
      `UPDATE binding b ${FENCE('b')}
            SET b.ever_ready = 1, b.first_ready_at = COALESCE(b.first_ready_at, ?), b.updated_at = ?
          WHERE b.tenant = ? AND b.reservation_id = ?`,
      [epoch, now, now, key.tenant, key.id],
    );
    if (bound.rowsAffected !== 1) return rollback(false); // the fence moved between the two
    return true;
  });
}

/**
 * A guarded state change: only from one of `from`, only while `epoch` is current. `reason`, when
 * not null, replaces last_error: what the tenant is shown (a last error text, schema/tenant-errors.ts),
 * stored printable and at most LAST_ERROR_MAX_CHARS characters.
 */
export async function transition(
  q: Queryable,
  key: ReservationKey,
  from: readonly ReservationState[],
  to: ReservationState,
  epoch: number,
  now: Date,
  reason: string | null,
): Promise<boolean> {
  const r = await q.execute(
    `UPDATE reservation r ${FENCE('r')}
        SET r.state = ?, r.state_changed_at = ?, r.updated_at = ?, r.last_error = COALESCE(?, r.last_error)
      WHERE r.tenant = ? AND r.id = ? AND r.state IN (?)`,
    [epoch, to, now, now, reason === null ? null : printableWithin(reason, LAST_ERROR_MAX_CHARS), key.tenant, key.id, from],
  );
  return r.rowsAffected > 0;
}

/**
 * The ModelService carries the replicas of change `generation`: record it applied — and, for an
 * increase (charged when it was accepted), settled. Fenced; one single-table statement; only
 * forward (a second call, or a late one for an older generation, changes nothing).
 */
export async function recordScaleApplied(q: Queryable, key: ReservationKey, generation: number, settles: boolean, epoch: number, now: Date): Promise<boolean> {
  const r = await q.execute(
    `UPDATE reservation r ${FENCE('r')}
        SET r.applied_generation = ?${settles ? ', r.settled_generation = ?' : ''}, r.updated_at = ?
      WHERE r.tenant = ? AND r.id = ? AND r.generation = ? AND r.applied_generation < ?`,
    [epoch, generation, ...(settles ? [generation] : []), now, key.tenant, key.id, generation, generation],
  );
  return r.rowsAffected > 0;
}

/**
 * Copies what the ModelService status observed onto the binding (progress.ts: only what is new;
 * a time is set once). Fenced; one single-table statement by (tenant, reservation).
 */
export async function recordProgress(q: Queryable, key: ReservationKey, p: Progress, epoch: number, now: Date): Promise<boolean> {
  const r = await q.execute(
    `UPDATE binding b ${FENCE('b')}
        SET b.scheduled_at = COALESCE(b.scheduled_at, ?), b.started_at = COALESCE(b.started_at, ?),
            b.last_failure = COALESCE(?, b.last_failure), b.updated_at = ?
      WHERE b.tenant = ? AND b.reservation_id = ?`,
    [epoch, p.scheduledAt, p.startedAt, p.lastFailure ? failureColumn(p.lastFailure) : null, now, key.tenant, key.id],
  );
  return r.rowsAffected > 0;
}

/** Tells the Worker's cron sweep that this reservation was looked at (it enqueues stale ones). */
export async function touchReconciled(q: Queryable, key: ReservationKey, epoch: number, now: Date): Promise<void> {
  await q.execute(`UPDATE reservation r ${FENCE('r')} SET r.last_reconciled_at = ? WHERE r.tenant = ? AND r.id = ?`, [epoch, now, key.tenant, key.id]);
}

/** Records since when the release is blocked (kept once set) and by what (replaced); cleared on release. */
export async function setReleaseBlocked(
  q: Queryable,
  at: ReservationKey,
  since: Date,
  blocker: ReleaseBlocker,
  epoch: number,
  now: Date,
): Promise<void> {
  await q.execute(
    `UPDATE reservation r ${FENCE('r')}
        SET r.release_blocked_since = COALESCE(r.release_blocked_since, ?), r.release_blocked_reason = ?,
            r.release_blocked_pods = ?, r.release_blocked_finalizers = ?, r.updated_at = ?
      WHERE r.tenant = ? AND r.id = ? AND r.state = 'releasing'`,
    [epoch, since, blocker.reason, JSON.stringify(blocker.pods), JSON.stringify(blocker.finalizers), now, at.tenant, at.id],
  );
}
