// SQL of the Worker's side of the queue: counting an admission in (the enqueue), cancelling one,
// and the reads behind positions and estimates. The dequeue is ledger/queue.ts (both sides run
// it). Every statement names the tenant (one shard); those that change a queued reservation run
// in a transaction that first locked the tenant's quota rows (ledger/queue.ts lockQuota).
import { int, time } from '../../ledger/columns.ts';
import type { Queryable, Row } from '../../ledger/db.ts';
import type { ReleaseRate } from '../../ledger/queue-pick.ts';
import { summedAmounts } from '../../ledger/queue.ts';
import { amountsFromRow } from '../../ledger/resources.ts';
import type { Amounts } from '../../schema/model-service.ts';

/** One more admission queued: its place is queue_tail + 1 (read under the same lock). */
export async function countQueued(tx: Queryable, tenant: string, now: Date): Promise<void> {
  await tx.execute('UPDATE tenant_quota SET queued = queued + 1, queue_tail = queue_tail + 1, updated_at = ? WHERE tenant = ?', [now, tenant]);
}

/** Guarded: queued → cancelled, and the tenant's queued count down with it. True when this call cancelled it. */
export async function cancelQueued(tx: Queryable, tenant: string, id: string, now: Date): Promise<boolean> {
  const r = await tx.execute(
    `UPDATE reservation SET state = 'cancelled', dequeued_at = ?, state_changed_at = ?, updated_at = ?, delete_requested_at = ?
      WHERE tenant = ? AND id = ? AND state = 'queued'`,
    [now, now, now, now, tenant, id],
  );
  if (r.rowsAffected !== 1) return false;
  await tx.execute('UPDATE tenant_quota SET queued = queued - 1, updated_at = ? WHERE tenant = ?', [now, tenant]);
  return true;
}

/** How many queued admissions of the tenant are at or before `seq`, and what they need together. */
export async function queuedThrough(q: Queryable, tenant: string, seq: number): Promise<{ count: number; needed: Amounts }> {
  const r = await q.execute(
    `SELECT COUNT(*) AS n, ${summedAmounts()} FROM reservation FORCE INDEX (ix_reservation_queue) WHERE state = 'queued' AND tenant = ? AND queue_seq <= ?`,
    [tenant, seq],
  );
  const row: Row = r.rows[0] ?? {};
  return { count: int(row.n ?? 0), needed: amountsFromRow(row) };
}

/** The window the release rate is measured over. */
export const RELEASE_RATE_WINDOW_S = 600;

/** What the tenant's quota got back (releases, refunds, an operator's release) in the window before `now`. */
export async function releaseRate(q: Queryable, tenant: string, now: Date): Promise<ReleaseRate> {
  const r = await q.execute(
    `SELECT COUNT(*) AS n, MIN(at) AS first_at, ${summedAmounts()} FROM quota_movement
      WHERE tenant = ? AND at >= ? AND direction IN ('release', 'refund', 'resolve-release')`,
    [tenant, new Date(now.getTime() - RELEASE_RATE_WINDOW_S * 1000)],
  );
  const row: Row = r.rows[0] ?? {};
  const releases = int(row.n ?? 0);
  const first = releases > 0 && row.first_at ? new Date(time(row.first_at)) : now;
  return { windowSeconds: RELEASE_RATE_WINDOW_S, releases, spanSeconds: (now.getTime() - first.getTime()) / 1000, released: amountsFromRow(row) };
}
