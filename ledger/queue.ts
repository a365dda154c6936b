// The dequeue: a tenant's queued admissions let in as its quota frees up, each in ONE transaction
// that locks the tenant's quota rows, re-reads its queue, and then moves one admission queued →
// admitted with its charge movement, its outbox `create` row and the usage — or expires the ones
// whose TTL ran out (never charged). Both sides call it: the controller right after a release or
// refund commits (fenced by its epoch: a deposed leader's dequeue matches no row), the Worker after
// a cancel and from the cron sweep (the safety net). Every statement names the tenant (one shard).
//
// Locks: the tenant's quota rows first (SELECT … FOR UPDATE), then the reservation rows. Every
// transaction that writes a queued reservation (enqueue, cancel, dequeue) takes the quota rows
// first, so they serialize per tenant and a queue position is handed out once.
import { int, str, time } from './columns.ts';
import { retryLockConflicts, type Db, type Queryable, type Row } from './db.ts';
import { FENCE_OF_CLUSTER } from './fence.ts';
import { insertMovement } from './movements.ts';
import { dedupeKey, enqueue } from './outbox.ts';
import { pickFromQueue, type QueuedItem, type QueuePick, type TenantQuota } from './queue-pick.ts';
import { AMOUNT_COLUMNS, amountColumns, amountsFromRow, RESOURCE_NAMES, type ResourceName } from './resources.ts';
import type { Amounts } from '../schema/model-service.ts';
import { isCrossShard } from './anchors.ts';
import { clusterInTx, reserveRoom, type Placer, type Target } from './placement.ts';

export type { TenantQuota } from './queue-pick.ts';

/** A tenant's quota rows as read: limits, usage and the queue counters kept on them. */
export interface LockedQuota {
  quota: TenantQuota;
  queued: number;
  queueTail: number;
  maxBypass: number;
}

/** The tenant's quota and queued count from its tenant_quota rows (`resource, hard, used, queued`). */
export function quotaFromRows(rows: readonly Row[]): { quota: TenantQuota; queued: number } {
  const quota: TenantQuota = {};
  let queued = 0;
  for (const row of rows) {
    const name = str(row.resource);
    if ((RESOURCE_NAMES as readonly string[]).includes(name)) quota[name as ResourceName] = { hard: int(row.hard), used: int(row.used) };
    queued = Math.max(queued, int(row.queued));
  }
  return { quota, queued };
}

/** Locks the tenant's quota rows for the rest of the transaction and reads them. */
export async function lockQuota(tx: Queryable, tenant: string): Promise<LockedQuota> {
  const r = await tx.execute('SELECT resource, hard, used, queued, queue_tail, queue_max_bypass FROM tenant_quota WHERE tenant = ? FOR UPDATE', [tenant]);
  const { quota, queued } = quotaFromRows(r.rows);
  return {
    quota,
    queued,
    queueTail: Math.max(0, ...r.rows.map((row) => int(row.queue_tail))),
    maxBypass: r.rows.length === 0 ? 0 : Math.min(...r.rows.map((row) => int(row.queue_max_bypass))),
  };
}

/** How many admissions the tenant has queued (tenant_quota.queued; 0 without quota rows). */
export async function queuedCount(q: Queryable, tenant: string): Promise<number> {
  const row = (await q.execute('SELECT MAX(queued) AS queued FROM tenant_quota WHERE tenant = ?', [tenant])).rows[0];
  return row?.queued === null || row?.queued === undefined ? 0 : int(row.queued);
}

/** How many of a tenant's queued admissions a dequeue transaction reads (the head and what may pass it). */
const QUEUE_WINDOW = 50;

/** The first `limit` queued admissions of a tenant, in FIFO order. */
export async function readQueue(q: Queryable, tenant: string, limit = QUEUE_WINDOW): Promise<Array<QueuedItem & { queuedAt: Date }>> {
  const r = await q.execute(
    `SELECT id, queue_seq, ${amountColumns()}, queue_bypassed, queue_expires_at, created_at FROM reservation FORCE INDEX (ix_reservation_queue)
      WHERE state = 'queued' AND tenant = ? ORDER BY queue_seq LIMIT ?`,
    [tenant, limit],
  );
  return r.rows.map((row) => ({
    id: str(row.id),
    seq: int(row.queue_seq),
    amounts: amountsFromRow(row),
    bypassed: int(row.queue_bypassed),
    expiresAt: row.queue_expires_at === null || row.queue_expires_at === undefined ? null : new Date(time(row.queue_expires_at)),
    queuedAt: new Date(time(row.created_at)),
  }));
}

/** Who dequeues: the controller fences its writes with its cluster's fence at its epoch (ledger/fence.ts); the Worker does not. */
export type Dequeuer = { side: 'controller'; cluster: string; epoch: number } | { side: 'worker' };
/** The Worker's dequeues (the cron, a cancel, the operator's tool): unfenced. */
export const WORKER: Dequeuer = { side: 'worker' };

export interface DequeueOptions {
  by: Dequeuer;
  now: () => Date;
  /** The request id the outbox rows carry (the trigger's). */
  requestId: string;
  /** At most this many admissions let in by one call (each its own transaction). */
  maxAdmits?: number;
  /**
   * False: only expire what outlived its TTL, admit nothing. The sweeps' per-tenant pass with clusters
   * registered: the shard's fair pass (ledger/queue-fair.ts) admits, and a room it holds back for a
   * queued admission must not go to another tenant's.
   */
  admit?: boolean;
  /** Called inside each admitting transaction, after its writes, before COMMIT (crash injection). */
  beforeCommit?: () => void;
  /** Where an admission leaving the queue goes (ledger/placement.ts). */
  placer: Placer;
}

export interface DequeuedAdmission {
  id: string;
  /** The head it passed (a bypass), if any. */
  passed: string | null;
  /** How long it waited in the queue. */
  waitedMs: number;
}

export interface DequeueResult {
  admitted: DequeuedAdmission[];
  /** Queued admissions whose TTL ran out, moved to `expired`. */
  expired: number;
  /**
   * Why the queue stops here: its head and what it is short of (null: the queue is empty); `forCluster`: its quota fits, but no
   * cluster has room (`head` is then the admission the quota let in, and `held` whether its bypass budget is spent).
   */
  waiting: (Extract<QueuePick, { type: 'wait' }> & { forCluster?: true }) | null;
  /** Transactions run (each BEGIN … COMMIT or ROLLBACK). */
  transactions: number;
  /** Admissions the tenant still has queued when the call ends. */
  queued: number;
}

/** `reservation r` written by the dequeuer: the controller's statement joins its fence. */
export const fenced = (by: Dequeuer) => (by.side === 'controller' ? { join: FENCE_OF_CLUSTER('r'), args: [by.cluster, by.epoch] } : { join: '', args: [] });

/**
 * Lets the tenant's queued admissions in while its quota allows, one transaction each, and
 * expires those whose TTL ran out. Returns what it did; a controller whose fence was raised (a
 * deposed leader) changes nothing.
 */
export async function dequeueTenant(db: Db, tenant: string, opts: DequeueOptions): Promise<DequeueResult> {
  const result: DequeueResult = { admitted: [], expired: 0, waiting: null, transactions: 0, queued: 0 };
  // Most releases find nothing queued: one read, no transaction. An admission queued while this
  // runs committed before the release that triggered it (it waited on the quota rows' lock), so it
  // is seen; one queued later saw the freed quota itself.
  if ((await queuedCount(db, tenant)) === 0) return result;
  const maxAdmits = opts.maxAdmits ?? QUEUE_WINDOW;
  const placeOf = async () => ({ anchor: await opts.placer.anchorOf(db, tenant), registered: await opts.placer.registered(db, false) });
  let place = await placeOf();
  for (let roomTaken = 0, reread = false; ; ) {
    result.transactions++;
    let step: DequeueStep;
    try {
      // A deadlock with a release of the same tenant (it locks the reservation before the quota rows)
      // rolled the whole transaction back: run it again (every statement in it is guarded).
      step = await retryLockConflicts(() => db.transaction(async (tx) => dequeueOnce(tx, tenant, opts, place)));
    } catch (err) {
      if (isCrossShard(err) && !reread) {
        // The anchor came from a shard list older than a reshard (rolled back): re-read it, once.
        reread = true;
        opts.placer.forgetShards();
        place = await placeOf();
        continue;
      }
      // The cluster's room went between the read and the reserve (rolled back): choose again, a few times.
      if (!(err instanceof RoomTaken) || ++roomTaken >= ROOM_ATTEMPTS) throw err;
      continue;
    }
    result.expired += step.expired;
    result.queued = step.queuedAfter;
    if (step.pick.type === 'admit' && step.admitted) {
      result.admitted.push({ id: step.pick.id, passed: step.pick.passes, waitedMs: step.waitedMs });
      if (result.admitted.length < maxAdmits) continue;
    }
    result.waiting = step.pick.type === 'wait' ? step.pick : null;
    return result;
  }
}

const ROOM_ATTEMPTS = 3;
class RoomTaken extends Error {}

interface DequeueStep {
  pick: QueuePick | NonNullable<DequeueResult['waiting']>;
  expired: number;
  /** False when the guarded move matched nothing (fenced out, or cancelled in between). */
  admitted: boolean;
  waitedMs: number;
  queuedAfter: number;
}

async function dequeueOnce(tx: Queryable, tenant: string, opts: DequeueOptions, place: { anchor: string; registered: boolean }): Promise<DequeueStep> {
  const locked = await lockQuota(tx, tenant);
  if (locked.queued === 0) return { pick: { type: 'empty' }, expired: 0, admitted: false, waitedMs: 0, queuedAfter: 0 };
  const now = opts.now();
  const fence = fenced(opts.by);
  // Whatever outlived its TTL leaves first, all at once (never charged).
  const expired = (
    await tx.execute(
      `UPDATE reservation r ${fence.join} SET r.state = 'expired', r.dequeued_at = ?, r.state_changed_at = ?, r.updated_at = ?
        WHERE r.state = 'queued' AND r.tenant = ? AND r.queue_expires_at <= ?`,
      [...fence.args, now, now, now, tenant, now],
    )
  ).rowsAffected;
  let left = expired;
  const live = opts.admit === false ? [] : await readQueue(tx, tenant);
  let pick: DequeueResult['waiting'] | QueuePick = pickFromQueue(live, locked.quota, locked.maxBypass);
  let admitted = false;
  let target: Target | null = null;
  if (pick.type === 'admit') {
    target = await clusterInTx(tx, opts.placer, place.anchor, place.registered, tenant, pick.amounts);
    // No cluster has room for it. `held`: its bypass budget is spent, so the cross-tenant pick
    // (ledger/queue-fair.ts) keeps the shard's freed room for it instead of letting another tenant pass.
    const id = pick.id;
    if (!target) pick = { type: 'wait', head: id, short: [], held: (live.find((q) => q.id === id)?.bypassed ?? 0) >= locked.maxBypass, forCluster: true };
  }
  if (pick.type === 'admit' && target) {
    const moved = await tx.execute(
      `UPDATE reservation r ${fence.join} SET r.state = 'admitted', r.cluster = ?, r.room_anchor = ?, r.dequeued_at = ?, r.state_changed_at = ?, r.updated_at = ?
        WHERE r.tenant = ? AND r.id = ? AND r.state = 'queued'`,
      [...fence.args, target.cluster, target.anchor, now, now, now, tenant, pick.id],
    );
    admitted = moved.rowsAffected === 1;
    if (admitted) {
      left++;
      await insertMovement(tx, { reservationId: pick.id, tenant, generation: 1, direction: 'charge', amounts: pick.amounts, now });
      await enqueue(tx, [{ tenant, reservationId: pick.id, kind: 'create', dedupeKey: dedupeKey.create(pick.id), requestId: opts.requestId, cluster: target.cluster }], now);
      if (pick.passes) await tx.execute('UPDATE reservation SET queue_bypassed = queue_bypassed + 1 WHERE tenant = ? AND id = ?', [tenant, pick.passes]);
    }
  }
  if (left > 0) await chargeAndCount(tx, tenant, admitted && pick.type === 'admit' ? pick.amounts : null, left, now);
  // The cluster's room last (its row is the hottest lock); taken meanwhile: roll back, choose again.
  if (admitted && pick.type === 'admit' && target?.anchor && !(await reserveRoom(tx, { anchor: target.anchor, cluster: target.cluster }, pick.amounts, ['open'], now))) throw new RoomTaken();
  if (admitted) opts.beforeCommit?.();
  const chosen = pick.type === 'admit' ? live.find((q) => q.id === pick.id) : undefined;
  return { pick, expired, admitted, waitedMs: chosen ? now.getTime() - chosen.queuedAt.getTime() : 0, queuedAfter: locked.queued - left };
}

/**
 * ONE statement on the tenant's quota rows (locked by this transaction): `used` up by the admitted
 * amounts (the pick checked they fit under the lock), `queued` down by the admissions that left.
 */
async function chargeAndCount(tx: Queryable, tenant: string, charge: Amounts | null, left: number, now: Date): Promise<void> {
  const cases = RESOURCE_NAMES.map(() => 'WHEN ? THEN ?').join(' ');
  const caseArgs = RESOURCE_NAMES.flatMap((r) => [r, charge ? charge[r] : 0]);
  await tx.execute(`UPDATE tenant_quota SET used = used + CASE resource ${cases} ELSE 0 END, queued = queued - ?, updated_at = ? WHERE tenant = ?`, [
    ...caseArgs,
    left,
    now,
    tenant,
  ]);
}

/** Column list of a reservation's amounts, for callers that sum them (`SUM(cpu_millis) AS cpu_millis`, …). */
export const summedAmounts = (): string => RESOURCE_NAMES.map((r) => `COALESCE(SUM(${AMOUNT_COLUMNS[r]}), 0) AS ${AMOUNT_COLUMNS[r]}`).join(', ');

/**
 * Tenants of ONE shard (`q` is a shard's Db) with queued admissions, after `after` in tenant order:
 * the dequeue passes of the cron sweep and of the controller. Read through (state, tenant, queue_seq): only queued rows.
 */
export async function queuedTenants(q: Queryable, after: string, limit: number): Promise<string[]> {
  const r = await q.execute(
    `SELECT DISTINCT tenant FROM reservation FORCE INDEX (ix_reservation_queue) WHERE state = 'queued' AND tenant > ? ORDER BY tenant LIMIT ?`,
    [after, limit],
  );
  return r.rows.map((row) => str(row.tenant));
}
