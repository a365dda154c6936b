// `npm run tenant -- queue`: the global queue as an operator sees it. Per shard, the tenants with
// queued admissions; for each, its head and WHY it waits — the same decision the dequeue takes
// (ledger/queue-pick.ts pickFromQueue over the same window, ledger/queue.ts readQueue), made on an
// unlocked read of the quota (functions/db/quota.ts readQuota): nothing is locked or changed.
// `npm run tenant -- queue-bypass <tenant> <K>` sets the tenant's bypass budget.
// Only the tenant list is a shard-targeted scan (queuedTenants); every other statement names the tenant.
import { readQuota } from '../../functions/db/quota.ts';
import { int } from '../../ledger/columns.ts';
import type { Db, Queryable } from '../../ledger/db.ts';
import { pickFromQueue, shortfalls, type QueuedItem, type TenantQuota } from '../../ledger/queue-pick.ts';
import { queuedTenants, readQueue } from '../../ledger/queue.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import type { Shortfall } from '../../schema/api.ts';
import { RESOURCE_NAMES, RESOURCE_UNITS, type Amounts } from '../../schema/model-service.ts';

/** One tenant's queue as read: what the dequeue would decide on. */
export interface TenantQueue {
  shard: string;
  tenant: string;
  /** tenant_quota.queued (the count; `items` is the dequeue's window of it). */
  queued: number;
  quota: TenantQuota;
  maxBypass: number;
  items: QueuedItem[];
}

/** The most a tenant's bypass budget may be set to (K later admissions may pass a head). */
export const MAX_QUEUE_BYPASS = 1000;

/** " millicores", " MiB", or nothing for a count. */
const unitOf = (r: Shortfall['resource']): string => (RESOURCE_UNITS[r].unit === 'count' ? '' : ` ${RESOURCE_UNITS[r].unit}`);

/** "cpu short by 1000 millicores, memory short by 512 MiB". */
export function shortText(short: readonly Shortfall[]): string {
  return short.map((s) => `${s.resource} short by ${s.short}${unitOf(s.resource)}`).join(', ');
}

/** "cpu=1000 memory=2048 nvidia.com/gpu=1" in ledger units (zero ones left out). */
export function amountsLedger(a: Amounts): string {
  return RESOURCE_NAMES.filter((r) => a[r] > 0 && r !== 'modelservices').map((r) => `${r}=${a[r]}`).join(' ') || '-';
}

/**
 * The lines of one tenant: its count and bypass budget, the queued ones whose TTL ran out but the
 * sweep has not expired yet, and the head with why it waits (or what the next dequeue admits).
 */
export function tenantQueueLines(q: TenantQueue, now: Date): string[] {
  const expired = q.items.filter((i) => i.expiresAt !== null && i.expiresAt.getTime() <= now.getTime());
  const live = q.items.filter((i) => !expired.includes(i));
  const out = [`${q.shard || '(unsharded)'}\t${q.tenant}\tqueued=${q.queued}\tmax-bypass=${q.maxBypass}`];
  if (expired.length > 0) out.push(`  ${expired.length} past their TTL, expired at the next dequeue: ${expired.map((i) => i.id).join(', ')}`);
  const pick = pickFromQueue(live, q.quota, q.maxBypass);
  const head = (id: string) => live.find((i) => i.id === id)!;
  switch (pick.type) {
    case 'empty':
      out.push(
        live.length === 0
          ? '  nothing left to admit'
          : `  no queued admission fits the hard limits: each waits for its TTL, a cancel or a raised limit (npm run tenant -- set ${q.tenant} …)`,
      );
      break;
    case 'admit':
      if (pick.passes === null) out.push(`  head ${pick.id} fits now (${amountsLedger(pick.amounts)}): admitted at the next dequeue`);
      else {
        const h = head(pick.passes);
        out.push(`  head ${h.id} waits: ${shortText(shortfalls(h.amounts, q.quota))} (bypassed ${h.bypassed}/${q.maxBypass})`);
        out.push(`  ${pick.id} fits now (${amountsLedger(pick.amounts)}) and passes it at the next dequeue`);
      }
      break;
    case 'wait': {
      const h = head(pick.head);
      const why = pick.held
        ? `held: bypass budget spent (${h.bypassed}/${q.maxBypass}); freed quota is kept for it`
        : `no later one fits either (bypassed ${h.bypassed}/${q.maxBypass})`;
      out.push(`  head ${pick.head} waits: ${shortText(pick.short)} (${why})`);
      break;
    }
  }
  return out;
}

/** The bypass budget of the tenant: the smallest over its quota rows (as lockQuota reads it). */
async function maxBypassOf(q: Queryable, tenant: string): Promise<number> {
  const r = await q.execute('SELECT MIN(queue_max_bypass) AS k FROM tenant_quota WHERE tenant = ?', [tenant]);
  const k = r.rows[0]?.k;
  return k === null || k === undefined ? 0 : int(k);
}

/** One tenant's queue, read without locks. */
export async function readTenantQueue(db: Db, shard: string, tenant: string): Promise<TenantQueue> {
  const { quota, queued } = await readQuota(db, tenant);
  return { shard, tenant, queued, quota, maxBypass: await maxBypassOf(db, tenant), items: await readQueue(db, tenant) };
}

/** Every shard's tenants with queued admissions (a page of them at a time), each tenant's queue read as it comes. */
export async function* globalQueue(db: Db, pageSize = 100): AsyncGenerator<TenantQueue> {
  for (const shard of await ledgerShards(db)) {
    let after = '';
    for (;;) {
      const tenants = await queuedTenants(shard.db, after, pageSize);
      for (const tenant of tenants) yield await readTenantQueue(db, shard.name, tenant);
      if (tenants.length < pageSize) break;
      after = tenants.at(-1)!;
    }
  }
}

/** A queue setting kept on every one of a tenant's quota rows: its column and whole-number range. */
export const QUEUE_SETTINGS = {
  /** How many later, smaller admissions may pass a head that does not fit (0: strict FIFO). */
  'queue-bypass': { column: 'queue_max_bypass', min: 0, max: MAX_QUEUE_BYPASS },
  /** The tenant's weight in the cross-tenant fair pick (ledger/fair-pick.ts). */
  weight: { column: 'fair_weight', min: 1, max: 1000 },
} as const;
export type QueueSetting = keyof typeof QUEUE_SETTINGS;

/** Sets one of the tenant's queue settings on all its quota rows; false when it has none (nothing to set it on). */
export async function setQueueSetting(db: Db, tenant: string, setting: QueueSetting, value: number, now = new Date()): Promise<boolean> {
  // Read first: MySQL counts only changed rows, so rowsAffected cannot tell "no rows" from "already set".
  if (Object.keys((await readQuota(db, tenant)).quota).length === 0) return false;
  await db.execute(`UPDATE tenant_quota SET ${QUEUE_SETTINGS[setting].column} = ?, updated_at = ? WHERE tenant = ?`, [value, now, tenant]);
  return true;
}
