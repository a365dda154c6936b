// The write of an operator's decision on a conflict (`npm run tenant -- resolve`); resolve.ts
// checks the live cluster before it runs. Not fenced: it is not the leader's write.
import { isDuplicateKey, type Db } from '../../ledger/db.ts';
import { commitOrRollback, type Rollback } from '../../controller/reservation/commit-or-rollback.ts';
import type { ReservationKey } from '../../controller/reservation/key.ts';
import { currentCharge, giveBackUsage, insertMovements, type Movement } from '../../controller/reservation/quota-moves.ts';
import { freeRoom } from '../../ledger/placement.ts';

export type Resolution = 'release' | 'keep';
export type ResolveOutcome = 'resolved' | 'not-in-conflict' | 'already-resolved';
/** Why nothing was written. */
type Unresolved = Exclude<ResolveOutcome, 'resolved'>;

/**
 * An operator's decision on a conflict (`npm run tenant -- resolve`), in ONE conditional
 * transaction keyed by (tenant, id). Not fenced: the controller never writes a reservation in
 * conflict, and the condition `state = 'conflict'` makes a second run change nothing.
 *  - release: conflict → released, the `release` movement (its primary key refuses a second),
 *    usage down by the reservation's own amounts, and the `resolve-release` audit row;
 *  - keep: the `resolve-keep` audit row and the reason on the reservation; it stays in conflict,
 *    charged (a later `release` is still possible; a second `keep` is refused by the key).
 * BEGIN + 4 (release) or 3 (keep) statements + COMMIT.
 */
export async function resolveConflict(
  db: Db,
  at: ReservationKey,
  decision: Resolution,
  note: string,
  now: Date,
): Promise<ResolveOutcome> {
  const lastError = `resolved by an operator (${decision}): ${note}`.slice(0, 1000);
  const where = 'WHERE tenant = ? AND id = ?';
  return commitOrRollback(db, async (tx, rollback: Rollback<Unresolved>) => {
    const moved = await tx.execute(
      decision === 'release'
        ? `UPDATE reservation SET state = 'released', state_changed_at = ?, updated_at = ?, last_error = ?,
                    release_blocked_since = NULL, release_blocked_reason = NULL, release_blocked_pods = NULL, release_blocked_finalizers = NULL
              ${where} AND state = 'conflict'`
        : `UPDATE reservation SET updated_at = ?, last_error = ? ${where} AND state = 'conflict'`,
      decision === 'release' ? [now, now, lastError, at.tenant, at.id] : [now, lastError, at.tenant, at.id],
    );
    if (moved.rowsAffected !== 1) return rollback('not-in-conflict');
    // Every statement names the tenant, so each is single-shard on a ledger sharded by tenant.
    const charge = await currentCharge(tx, at);
    if (!charge) return rollback('not-in-conflict');
    const { amounts, generation } = charge;
    const movements: Movement[] =
      decision === 'release' ? [{ direction: 'resolve-release', amounts, note }, { direction: 'release', amounts }] : [{ direction: 'resolve-keep', amounts, note }];
    try {
      await insertMovements(tx, at, generation, movements, now);
    } catch (err) {
      if (isDuplicateKey(err)) return rollback('already-resolved');
      throw err;
    }
    if (decision === 'release') {
      await giveBackUsage(tx, at.tenant, amounts, now);
      if (charge.room) await freeRoom(tx, charge.room, amounts, now);
    }
    return 'resolved' as const;
  });
}
