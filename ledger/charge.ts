// The conditional all-or-nothing charge of a tenant's quota: an admission's, an increase's (PATCH),
// an autoscaler's scale-up. The dequeue charges its own (ledger/queue.ts).
import type { Amounts } from '../schema/model-service.ts';
import type { Queryable } from './db.ts';
import { chargedResources } from './resources.ts';

/**
 * Charges every non-zero amount in ONE statement, only where `used + amount <= hard` and the tenant
 * has no queued admission (`queued = 0`: nothing passes a waiting queue). Returns true when every
 * needed row was updated; otherwise the caller must roll back (some rows may have been charged).
 * A missing row means quota 0, so it never matches.
 */
export async function chargeQuota(q: Queryable, tenant: string, amounts: Amounts, now: Date): Promise<boolean> {
  const needed = chargedResources(amounts);
  if (needed.length === 0) return true;
  const whens = needed.map(() => 'WHEN ? THEN ?').join(' ');
  const caseArgs = needed.flatMap((r) => [r, amounts[r]]);
  const r = await q.execute(
    `UPDATE tenant_quota SET used = used + CASE resource ${whens} END, updated_at = ?
     WHERE tenant = ? AND resource IN (?) AND used + CASE resource ${whens} END <= hard AND queued = 0`,
    [...caseArgs, now, tenant, needed, ...caseArgs],
  );
  return r.rowsAffected === needed.length;
}
