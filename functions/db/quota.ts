// SQL of the tenant_quota family: reads for GET /quota and the operator's upsert (npm run tenant).
// The conditional charge is ledger/charge.ts.
import type { Amounts } from '../../schema/model-service.ts';
import { ACTIVE_STATES, QUEUED_STATES, RELEASING_STATES, RESERVATION_STATES, UNCHARGED_END_STATES } from '../../schema/admission.ts';
import type { Queryable } from '../../ledger/db.ts';
import { quotaFromRows, type TenantQuota } from '../../ledger/queue.ts';
import { shortfalls } from '../../ledger/queue-pick.ts';
import type { Shortfall } from '../../schema/api.ts';
import { AMOUNT_COLUMNS, amountsFromRow, RESOURCE_NAMES, type ResourceName } from '../../ledger/resources.ts';


export interface TenantQuotaRead {
  quota: TenantQuota;
  /** Admissions the tenant has queued for quota. */
  queued: number;
}

export async function readQuota(q: Queryable, tenant: string): Promise<TenantQuotaRead> {
  return quotaFromRows((await q.execute('SELECT resource, hard, used, queued FROM tenant_quota WHERE tenant = ?', [tenant])).rows);
}

/** Why the tenant's quota would refuse `amounts` now (short of it, or admissions queued that nothing passes); null: it takes them. */
export async function quotaRefusal(q: Queryable, tenant: string, amounts: Amounts): Promise<{ short: Shortfall[]; queued: number } | null> {
  const { quota, queued } = await readQuota(q, tenant);
  const short = shortfalls(amounts, quota);
  return short.length === 0 && queued === 0 ? null : { short, queued };
}

export type Breakdown = Record<'active' | 'releasing' | 'blocked' | 'conflict' | 'queued', Amounts>;

const list = (states: readonly string[]) => states.map((s) => `'${s}'`).join(', ');
/** What a breakdown bucket may hold: every state that holds a charge now, and `queued`. */
const SUMMED_STATES = RESERVATION_STATES.filter((s) => s !== 'released' && !(UNCHARGED_END_STATES as readonly string[]).includes(s));
const BUCKETS: Record<keyof Breakdown, string> = {
  active: `r.state IN (${list(ACTIVE_STATES)})`,
  releasing: `r.state IN (${list(RELEASING_STATES)})`,
  blocked: `r.state IN (${list(RELEASING_STATES)}) AND r.release_blocked_since IS NOT NULL`,
  conflict: `r.state = 'conflict'`,
  queued: `r.state IN (${list(QUEUED_STATES)})`,
};
const BREAKDOWN_SQL = `SELECT ${Object.entries(BUCKETS)
  .flatMap(([bucket, cond]) =>
    RESOURCE_NAMES.map((res) => `COALESCE(SUM(CASE WHEN ${cond} THEN r.${AMOUNT_COLUMNS[res]} ELSE 0 END), 0) AS ${bucket}_${AMOUNT_COLUMNS[res]}`),
  )
  .join(',\n  ')}
FROM reservation r FORCE INDEX (ix_reservation_state_tenant) WHERE r.state IN (${list(SUMMED_STATES)}) AND r.tenant = ?`;

/**
 * Usage by reservation state, from the reservations themselves (one statement). It reads only the
 * tenant's reservations in the states it sums — one range of (state, tenant) per state — so its
 * cost follows what the tenant holds, never how many admissions it ever had released.
 */
export async function readBreakdown(q: Queryable, tenant: string): Promise<Breakdown> {
  const r = await q.execute(BREAKDOWN_SQL, [tenant]);
  const row = r.rows[0] ?? {};
  const amounts = (bucket: string): Amounts => amountsFromRow(row, `${bucket}_`);
  return { active: amounts('active'), releasing: amounts('releasing'), blocked: amounts('blocked'), conflict: amounts('conflict'), queued: amounts('queued') };
}

/** Creates or updates one hard limit; `used` is never touched here. */
export async function setHard(q: Queryable, tenant: string, resource: ResourceName, hard: number, now: Date): Promise<void> {
  await q.execute(
    `INSERT INTO tenant_quota (tenant, resource, hard, used, updated_at) VALUES (?, ?, ?, 0, ?)
     ON DUPLICATE KEY UPDATE hard = ?, updated_at = ?`,
    [tenant, resource, hard, now, hard, now],
  );
}

/** Creates a hard limit only where the tenant has none yet (an existing limit is kept). */
export async function ensureHard(q: Queryable, tenant: string, resource: ResourceName, hard: number, now: Date): Promise<void> {
  await q.execute('INSERT IGNORE INTO tenant_quota (tenant, resource, hard, used, updated_at) VALUES (?, ?, ?, 0, ?)', [tenant, resource, hard, now]);
}
