// Issue 30's cross-tenant fair dequeue on ONE ledger shard (docs/multi-cluster.md, "Issue 30's
// cross-tenant weighted fair pick"): when a cluster room frees up on the shard (a release or a
// refund, or the controller's queue sweep), the tenants of the shard with a queue are offered it in
// fair order (ledger/fair-pick.ts: lowest weighted dominant share of the shard's allotted capacity
// first), each through its own single-shard dequeue (ledger/queue.ts `dequeueTenant`, one admission),
// until one is admitted; then the shares are read again and the next room goes the same way.
//
// The candidates' read is unlocked and shard-targeted (the shard's tenants with a queue and their
// usage and weight): fairness is a preference, quota and room are enforced under locks in each
// tenant's transaction. A tenant whose queue waits for its own quota is passed over (it holds
// nothing back). One whose admission fits its quota but no room may be passed by another tenant's
// admission that fits; each such pass counts on that admission's bypass budget (`queue_bypassed`, in
// a transaction of its tenant under its quota-row lock), and once the budget is spent the shard's
// freed room is held back for it: no other tenant is admitted from this shard's queues until it fits.
//
// Only with registered clusters: without them there is no shared capacity (every tenant waits for
// its own quota only) and the per-tenant dequeue is all there is.
import type { Db, Queryable } from './db.ts';
import { int, str } from './columns.ts';
import { fairOrder, type FairCandidate } from './fair-pick.ts';
import { dequeueTenant, fenced, lockQuota, queuedTenants, WORKER, type DequeuedAdmission, type DequeueOptions, type Dequeuer, type DequeueResult } from './queue.ts';
import type { ShardAnchor } from './anchors.ts';
import { addAmounts, amountsOf, RESOURCE_NAMES, type ResourceName } from './resources.ts';
import type { Amounts } from '../schema/model-service.ts';

/** {@link WORKER} for every tenant. */
export const byWorker = async (): Promise<Dequeuer> => WORKER;

/** How many tenants with a queue one round considers: the shard's first by name (the rest wait for a later round or the sweep). */
const FAIR_TENANTS = 100;
/** How many candidates one round offers the room to (each costs a read and a transaction) before it stops. */
export const FAIR_ATTEMPTS = 8;

export interface FairDequeueOptions extends Omit<DequeueOptions, 'by'> {
  /** Who dequeues for each tenant (the controller: its fence at its epoch, raised on the tenant's row first). */
  byFor: (tenant: string) => Promise<Dequeuer>;
  /** Candidates a round offers the room to (default FAIR_ATTEMPTS; the cron's statement budget may allow fewer). */
  maxAttempts?: number;
}

export interface FairDequeueResult {
  /** Each with its tenant, and the other tenant's admission it passed for the room (null: none). */
  admitted: Array<DequeuedAdmission & { tenant: string; passedAcross: string | null }>;
  expired: number;
  /** The admission the shard's room is held back for (its bypass budget is spent), if any. */
  holding: { tenant: string; id: string } | null;
  /** Each tenant offered a room, and how many it still has queued. */
  queued: Map<string, number>;
  transactions: number;
  /** Statements outside the transactions (the candidates, the rooms, each tenant's queued count). */
  reads: number;
}

/**
 * Offers the shard's freed cluster room to its queued tenants in fair order, one admission at a
 * time, until nothing more is admitted or `maxAdmits` were.
 */
export async function dequeueFair(db: Db, shard: ShardAnchor, opts: FairDequeueOptions): Promise<FairDequeueResult> {
  const result: FairDequeueResult = { admitted: [], expired: 0, holding: null, queued: new Map(), transactions: 0, reads: 0 };
  const maxAdmits = opts.maxAdmits ?? 50;
  let capacity: Amounts | undefined;
  while (result.admitted.length < maxAdmits) {
    const candidates = await fairCandidates(shard.shard.db, FAIR_TENANTS);
    result.reads += candidates.length === 0 ? 1 : 2;
    if (candidates.length === 0) return result; // most releases: nothing queued on the shard (one read)
    if (!capacity) {
      result.reads++;
      capacity = allotted(await opts.placer.rooms(db, shard.anchor, true));
    }
    const order = fairOrder(candidates, capacity);
    let passing: { tenant: string; id: string } | null = null;
    let admitted = false;
    for (const c of order.slice(0, opts.maxAttempts ?? FAIR_ATTEMPTS)) {
      const by = await opts.byFor(c.tenant);
      const r = await dequeueTenant(db, c.tenant, { ...opts, by, maxAdmits: 1 });
      result.reads++;
      result.transactions += r.transactions;
      result.expired += r.expired;
      result.queued.set(c.tenant, r.queued);
      const first = r.admitted[0];
      if (first) {
        result.admitted.push({ ...first, tenant: c.tenant, passedAcross: passing?.id ?? null });
        if (passing) {
          result.transactions++;
          await notePassed(db, passing, await opts.byFor(passing.tenant));
        }
        admitted = true;
        break;
      }
      if (!r.waiting?.forCluster || passing) continue;
      // The best-placed waiter fits its quota but no room: others may pass it, within its budget.
      if (r.waiting.held) {
        result.holding = { tenant: c.tenant, id: r.waiting.head };
        return result;
      }
      passing = { tenant: c.tenant, id: r.waiting.head };
    }
    if (!admitted) return result;
  }
  return result;
}

/**
 * The dequeue after something `tenant` did that may let a queued admission in (a release, a refund, a
 * cancel, a raised limit or bypass budget): with clusters registered the room is shared, so its
 * shard's fair pass; without, its own queue.
 */
export async function dequeueFor(db: Db, tenant: string, opts: FairDequeueOptions): Promise<FairDequeueResult> {
  if (await opts.placer.registered(db, false)) return dequeueFair(db, await opts.placer.shardAnchorOf(db, tenant), opts);
  return ofTenant(tenant, await dequeueTenant(db, tenant, { ...opts, by: await opts.byFor(tenant) }));
}

/** One tenant's dequeue (ledger/queue.ts) told as a fair pass's result. */
export const ofTenant = (tenant: string, r: DequeueResult): FairDequeueResult => ({
  admitted: r.admitted.map((a) => ({ ...a, tenant, passedAcross: null })),
  expired: r.expired,
  holding: null,
  queued: new Map([[tenant, r.queued]]),
  transactions: r.transactions,
  reads: 1,
});

/** The shard's allotted capacity (every cluster's allotment on its anchor): the denominator of the shares. */
function allotted(rooms: ReadonlyArray<{ allotted: Amounts }>): Amounts {
  return rooms.reduce((sum, r) => addAmounts(sum, r.allotted), amountsOf(() => 0));
}

/**
 * The shard's tenants with a queue (the first `limit` by name) with their usage and weight: two
 * shard-targeted reads, unlocked (the pick is a preference; each dequeue decides under its locks).
 */
async function fairCandidates(shard: Queryable, limit: number): Promise<FairCandidate[]> {
  const tenants = await queuedTenants(shard, '', limit);
  if (tenants.length === 0) return [];
  const r = await shard.execute(`SELECT tenant, resource, used, fair_weight FROM tenant_quota WHERE tenant IN (${tenants.map(() => '?').join(', ')})`, tenants);
  const byTenant = new Map<string, FairCandidate>(tenants.map((tenant) => [tenant, { tenant, used: amountsOf(() => 0), weight: 1 }]));
  for (const row of r.rows) {
    const c = byTenant.get(str(row.tenant));
    const resource = str(row.resource);
    if (!c || !(RESOURCE_NAMES as readonly string[]).includes(resource)) continue;
    c.used[resource as ResourceName] = int(row.used);
    c.weight = Math.max(1, int(row.fair_weight));
  }
  return [...byTenant.values()];
}

/** One more pass counted on a queued admission's bypass budget, under its tenant's quota-row lock (fenced like the dequeue; gone meanwhile: nothing to count). */
async function notePassed(db: Db, at: { tenant: string; id: string }, by: Dequeuer): Promise<void> {
  const fence = fenced(by);
  await db.transaction(async (tx) => {
    await lockQuota(tx, at.tenant);
    await tx.execute(`UPDATE reservation r ${fence.join} SET r.queue_bypassed = r.queue_bypassed + 1 WHERE r.tenant = ? AND r.id = ? AND r.state = 'queued'`, [
      ...fence.args,
      at.tenant,
      at.id,
    ]);
  });
}
