// SQL of the scheduled sweep: the single-flight lease per (cron, scheduledTime) and the page
// query over reservations that need a safety-net reconcile.
import { RECONCILED_STATES } from '../../schema/admission.ts';
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

/** The states the sweep looks at: every state but the terminal ones and `queued`. */
const OPEN = RECONCILED_STATES.map((s) => `'${s}'`)
  .join(', ');

/** A reservation of the sweep's scan, in (state, tenant, id) order: the cursor of the next page. */
export interface SweepKey {
  state: string;
  tenant: string;
  id: string;
  /** The cluster it is placed on: its reconcile row goes to that cluster's controller. */
  cluster: string;
}

/**
 * Non-terminal reservations after `after` in (state, tenant, id) order without a pending reconcile
 * row that either were not reconciled (or created) since `staleBefore`, or are still `admitted`
 * with no live outbox row (every row of theirs is done or dead: nothing would ever deliver them —
 * the reconcile row enqueued for them does). Crosses tenants by design (the safety net sees all),
 * so it runs on ONE shard (`q` is a shard's Db, ledger/shards.ts); the subqueries are correlated on
 * the tenant too, so the statement stays valid on any shard layout. The order keeps a page's
 * tenants together within a state: the sweep enqueues one statement per run of one tenant.
 *
 * Read through (state, tenant, id) from the cursor, one range per open state: a page examines open
 * reservations only, however many released ones the shard holds. A reservation that changes state
 * while a run pages may be seen twice (its pending reconcile row is not duplicated) or not at all
 * in that run (the next one sees it).
 */
export async function staleReservations(q: Queryable, after: SweepKey | null, staleBefore: Date, limit: number): Promise<SweepKey[]> {
  const [state, tenant, id] = [after?.state ?? '', after?.tenant ?? '', after?.id ?? ''];
  const r = await q.execute(
    `SELECT r.state, r.tenant, r.id, r.cluster FROM reservation r FORCE INDEX (ix_reservation_state_tenant)
     WHERE r.state IN (${OPEN}) AND (r.state > ? OR (r.state = ? AND (r.tenant > ? OR (r.tenant = ? AND r.id > ?))))
       AND (COALESCE(r.last_reconciled_at, r.created_at) < ?
            OR (r.state = 'admitted'
                AND NOT EXISTS (SELECT 1 FROM outbox l WHERE l.tenant = r.tenant AND l.reservation_id = r.id AND l.done_at IS NULL AND l.dead_at IS NULL)))
       AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.tenant = r.tenant AND o.dedupe_key = CONCAT('reconcile:', r.id, ':pending'))
     ORDER BY r.state, r.tenant, r.id LIMIT ?`,
    [state, state, tenant, tenant, id, staleBefore, limit],
  );
  return r.rows.map((row) => ({ state: str(row.state), tenant: str(row.tenant), id: str(row.id), cluster: str(row.cluster) }));
}
