// Where the controller moves quota: a decrease's refund and the release. Each is ONE transaction
// that first makes a FENCED, conditional state change of the reservation (ledger/fence.ts: a
// deposed leader's statement matches no row) and rolls back when it matched nothing; then writes
// the `quota_movement` row (its primary key (reservation, generation, direction) refuses a second
// refund or release of the same change) and gives the tenant's usage back, and the cluster's room where
// the admission holds one (ledger/placement.ts freeRoom; the anchor is the reservation's). The admission's and an
// increase's charge are the Worker's (functions/db/); the operator's resolve --release is in
// resolve-conflict.ts and gives usage back with giveBackUsage.
import type { Db, Queryable } from '../../ledger/db.ts';
import { int } from '../../ledger/columns.ts';
import { freeRoom, roomOfRow, type Room } from '../../ledger/placement.ts';
import { FENCE } from '../../ledger/fence.ts';
import { AMOUNT_COLUMNS, amountArgs, amountColumns, amountsFromRow, releaseUsageByAmounts, RESOURCE_NAMES } from '../../ledger/resources.ts';
import type { MovementDirection } from '../../ledger/rows.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { crashPoint } from '../runtime/crash.ts';
import { commitOrRollback } from './commit-or-rollback.ts';
import type { ReservationKey } from './key.ts';

/**
 * The tenant's usage goes down by exactly `amounts`: one statement by tenant. A step of a
 * transaction whose first statement decided that the quota is due back (release, refundScaleDown,
 * the operator's resolveConflict), never a write on its own.
 */
export async function giveBackUsage(tx: Queryable, tenant: string, amounts: Amounts, now: Date): Promise<void> {
  const usage = releaseUsageByAmounts(amounts);
  await tx.execute(`UPDATE tenant_quota SET ${usage.sql}, updated_at = ? WHERE tenant = ? AND resource IN (?)`, [...usage.args, now, tenant, [...RESOURCE_NAMES]]);
}

/** A quota_movement row of a change generation: its direction, amounts and (operator rows) note. */
export interface Movement {
  direction: MovementDirection;
  amounts: Amounts;
  note?: string | null;
}

/**
 * The movement rows of one change generation, in ONE statement; the primary key (reservation,
 * generation, direction) refuses a second of any of them. A step of a transaction whose first
 * statement decided that the quota moves (refundScaleDown, release, the operator's resolveConflict).
 */
export async function insertMovements(tx: Queryable, key: ReservationKey, generation: number, movements: readonly Movement[], now: Date): Promise<void> {
  await tx.execute(
    `INSERT INTO quota_movement (reservation_id, generation, direction, tenant, ${amountColumns()}, at, note)
     VALUES ${movements.map(() => `(?, ?, ?, ?, ${RESOURCE_NAMES.map(() => '?').join(', ')}, ?, ?)`).join(', ')}`,
    movements.flatMap((m) => [key.id, generation, m.direction, key.tenant, ...amountArgs(m.amounts), now, m.note ?? null]),
  );
}

export interface CurrentCharge {
  generation: number;
  amounts: Amounts;
  /** The cluster's room it holds: where to give it back (null: none, the unregistered cluster). */
  room: Room | null;
}

/** The reservation's change generation, what it charges now and the room it holds, read in the caller's transaction (the row it locked). */
export async function currentCharge(tx: Queryable, key: ReservationKey): Promise<CurrentCharge | undefined> {
  const row = (await tx.execute(`SELECT generation, ${amountColumns()}, cluster, room_anchor FROM reservation WHERE tenant = ? AND id = ?`, [key.tenant, key.id])).rows[0];
  return row ? { generation: int(row.generation), amounts: amountsFromRow(row), room: roomOfRow(row) } : undefined;
}

/**
 * A decrease's refund = ONE conditional transaction, fenced: the reservation's amounts go down by
 * `delta` and its change generation is settled (only while it still runs, the generation is
 * current, applied and unsettled: a delete that overtook the decrease releases it all instead);
 * the `refund` movement of this generation (its primary key refuses a second); usage down by
 * `delta`; the cluster's room it holds (`room`, as the reconcile read it: set when it was placed) down
 * by `delta`. Returns false (nothing changed) when there was nothing to refund. BEGIN + 3 (+ 1 with a
 * room) + COMMIT.
 */
export async function refundScaleDown(db: Db, key: ReservationKey, generation: number, delta: Amounts, epoch: number, now: Date, room: Room | null): Promise<boolean> {
  const subtract = RESOURCE_NAMES.map((res) => `r.${AMOUNT_COLUMNS[res]} = r.${AMOUNT_COLUMNS[res]} - ?`).join(', ');
  return commitOrRollback(db, async (tx, rollback) => {
    const moved = await tx.execute(
      `UPDATE reservation r ${FENCE('r')}
            SET ${subtract}, r.settled_generation = r.generation, r.updated_at = ?
          WHERE r.tenant = ? AND r.id = ? AND r.generation = ? AND r.applied_generation >= r.generation
            AND r.settled_generation < r.generation AND r.state IN ('delivered', 'ready')`,
      [epoch, ...amountArgs(delta), now, key.tenant, key.id, generation],
    );
    if (moved.rowsAffected !== 1) return rollback(false);
    await insertMovements(tx, key, generation, [{ direction: 'refund', amounts: delta }], now);
    crashPoint('inside-refund-before-commit');
    await giveBackUsage(tx, key.tenant, delta, now);
    if (room) await freeRoom(tx, room, delta, now);
    return true;
  });
}

/**
 * Release = ONE conditional transaction: releasing → released only if still releasing and the
 * epoch is current; the `quota_movement` release row (its primary key refuses a second
 * release); usage decremented by the reservation's own amounts. Returns false (and changes
 * nothing) when there was nothing to release. BEGIN + 4 statements + COMMIT, each by
 * (tenant, …): the amounts are read back from the row the first statement locked, then written
 * as values (vtgate routes an INSERT … SELECT or an UPDATE … JOIN row by row, not as one shard's).
 */
export async function release(db: Db, key: ReservationKey, epoch: number, now: Date): Promise<boolean> {
  return commitOrRollback(db, async (tx, rollback) => {
    const moved = await tx.execute(
      `UPDATE reservation r ${FENCE('r')}
            SET r.state = 'released', r.state_changed_at = ?, r.updated_at = ?,
                r.release_blocked_since = NULL, r.release_blocked_reason = NULL, r.release_blocked_pods = NULL, r.release_blocked_finalizers = NULL
          WHERE r.tenant = ? AND r.id = ? AND r.state = 'releasing'`,
      [epoch, now, now, key.tenant, key.id],
    );
    if (moved.rowsAffected !== 1) return rollback(false);
    const charge = await currentCharge(tx, key);
    if (!charge) return rollback(false);
    await insertMovements(tx, key, charge.generation, [{ direction: 'release', amounts: charge.amounts }], now);
    await giveBackUsage(tx, key.tenant, charge.amounts, now);
    if (charge.room) await freeRoom(tx, charge.room, charge.amounts, now);
    crashPoint('inside-release-before-commit');
    return true;
  });
}
