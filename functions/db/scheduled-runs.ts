// SQL of the scheduled sweep: the single-flight lease per (cron, scheduledTime) and the page
// query over reservations that need a safety-net reconcile.
import { TERMINAL_STATES } from '../../schema/admission.ts';
import { str } from '../../ledger/columns.ts';
import { isDuplicateKey, type Queryable } from '../../ledger/db.ts';

export interface RunKey {
  cron: string;
  scheduledMs: number;
}

/**
 * Claims the run: inserts it, or takes over one whose holder's lease expired before it
 * finished. Returns the number of statements used and whether this caller holds the run.
 */
export async function claimRun(q: Queryable, key: RunKey, holder: string, now: Date, leaseUntil: Date): Promise<{ claimed: boolean; statements: number }> {
  try {
    await q.execute(
      `INSERT INTO scheduled_run (cron, scheduled_ms, holder, lease_until, started_at) VALUES (?, ?, ?, ?, ?)`,
      [key.cron, key.scheduledMs, holder, leaseUntil, now],
    );
    return { claimed: true, statements: 1 };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const r = await q.execute(
    `UPDATE scheduled_run SET holder = ?, lease_until = ?, started_at = ?
     WHERE cron = ? AND scheduled_ms = ? AND finished_at IS NULL AND lease_until < ?`,
    [holder, leaseUntil, now, key.cron, key.scheduledMs, now],
  );
  return { claimed: r.rowsAffected === 1, statements: 2 };
}

export async function finishRun(q: Queryable, key: RunKey, holder: string, now: Date, statements: number, enqueued: number): Promise<void> {
  await q.execute(
    `UPDATE scheduled_run SET finished_at = ?, statements = ?, enqueued = ?
     WHERE cron = ? AND scheduled_ms = ? AND holder = ?`,
    [now, statements, enqueued, key.cron, key.scheduledMs, holder],
  );
}

const TERMINAL = TERMINAL_STATES.map((s) => `'${s}'`).join(', ');

/**
 * Non-terminal reservations after `afterId` (ascending) without a pending reconcile row that
 * either were not reconciled (or created) since `staleBefore`, or are still `admitted` with no
 * live outbox row (every row of theirs is done or dead: nothing would ever deliver them — the
 * reconcile row enqueued for them does). Crosses tenants by design: the safety net sees all.
 */
export async function staleReservations(q: Queryable, afterId: string, staleBefore: Date, limit: number): Promise<string[]> {
  const r = await q.execute(
    `SELECT r.id FROM reservation r
     WHERE r.id > ? AND r.state NOT IN (${TERMINAL})
       AND (COALESCE(r.last_reconciled_at, r.created_at) < ?
            OR (r.state = 'admitted'
                AND NOT EXISTS (SELECT 1 FROM outbox l WHERE l.reservation_id = r.id AND l.done_at IS NULL AND l.dead_at IS NULL)))
       AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.dedupe_key = CONCAT('reconcile:', r.id, ':pending'))
     ORDER BY r.id LIMIT ?`,
    [afterId, staleBefore, limit],
  );
  return r.rows.map((row) => str(row.id));
}
