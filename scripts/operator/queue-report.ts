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
import { createPlacer } from '../../ledger/placement.ts';
import { roomFits, roomShortfall, type ClusterRoom } from '../../ledger/placement-policy.ts';
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
  /** Its weight in the cross-tenant pick of freed cluster room (tenant_quota.fair_weight). */
  weight: number;
  /** The clusters' rooms on its shard (null: no cluster registered, its own quota is all it waits for). */
  rooms: readonly ClusterRoom[] | null;
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
  const out = [`${q.shard || '(unsharded)'}\t${q.tenant}\tqueued=${q.queued}\tmax-bypass=${q.maxBypass}\tweight=${q.weight}`];
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
    case 'admit': {
      const noRoom = q.rooms !== null && !q.rooms.some((r) => r.mode === 'open' && roomFits(r, pick.amounts));
      if (noRoom) {
        const h = live.find((i) => i.id === pick.id)!;
        out.push(`  ${pick.id} fits the quota (${amountsLedger(pick.amounts)}) but no cluster has room: ${roomsText(q.rooms ?? [], pick.amounts)}`);
        out.push(
          `    freed room goes to the shard's lowest weighted share first; ${h.bypassed >= q.maxBypass ? `held: bypass budget spent (${h.bypassed}/${q.maxBypass}), the next room that fits is kept for it` : `other tenants may pass it (bypassed ${h.bypassed}/${q.maxBypass})`}`,
        );
      } else if (pick.passes === null) out.push(`  head ${pick.id} fits now (${amountsLedger(pick.amounts)}): admitted at the next dequeue`);
      else {
        const h = head(pick.passes);
        out.push(`  head ${h.id} waits: ${shortText(shortfalls(h.amounts, q.quota))} (bypassed ${h.bypassed}/${q.maxBypass})`);
        out.push(`  ${pick.id} fits now (${amountsLedger(pick.amounts)}) and passes it at the next dequeue`);
      }
      break;
    }
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

/** "c1: cpu short by 2000 millicores; c2: draining" — why each cluster's room on the shard does not take `want`. */
export function roomsText(rooms: readonly ClusterRoom[], want: Amounts): string {
  if (rooms.length === 0) return 'no cluster has an allotment on this shard';
  return rooms
    .map((r) => {
      if (r.mode !== 'open') return `${r.cluster}: ${r.mode}`;
      const lack = roomShortfall(r, want);
      return `${r.cluster}: ${RESOURCE_NAMES.filter((n) => lack[n] > 0).map((n) => `${n} short by ${lack[n]}${unitOf(n)}`).join(', ')}`;
    })
    .join('; ');
}

/** The tenant's bypass budget (the smallest over its quota rows, as lockQuota reads it) and weight. */
async function settingsOf(q: Queryable, tenant: string): Promise<{ maxBypass: number; weight: number }> {
  const row = (await q.execute('SELECT MIN(queue_max_bypass) AS k, MAX(fair_weight) AS w FROM tenant_quota WHERE tenant = ?', [tenant])).rows[0];
  return { maxBypass: row?.k === null || row?.k === undefined ? 0 : int(row.k), weight: row?.w === null || row?.w === undefined ? 1 : int(row.w) };
}

/** One tenant's queue, read without locks; `rooms` the clusters' rooms on its shard (null: none registered). */
export async function readTenantQueue(db: Db, shard: string, tenant: string, rooms: readonly ClusterRoom[] | null): Promise<TenantQueue> {
  const { quota, queued } = await readQuota(db, tenant);
  return { shard, tenant, queued, quota, ...(await settingsOf(db, tenant)), rooms, items: await readQueue(db, tenant) };
}

/** Every shard's tenants with queued admissions (a page of them at a time), each tenant's queue read as it comes. */
export async function* globalQueue(db: Db, pageSize = 100): AsyncGenerator<TenantQueue> {
  const placer = createPlacer();
  const registered = await placer.registered(db, true);
  for (const { shard, anchor } of await placer.anchors(db)) {
    const rooms = registered ? await placer.rooms(db, anchor, true) : null;
    let after = '';
    for (;;) {
      const tenants = await queuedTenants(shard.db, after, pageSize);
      for (const tenant of tenants) yield await readTenantQueue(db, shard.name, tenant, rooms);
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
