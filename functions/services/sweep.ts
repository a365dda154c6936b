// scheduled(): the safety net. Enqueues one `reconcile` outbox row per non-terminal
// reservation that has not been reconciled (or created) for `staleAfterMs`, so the in-cluster
// controller re-checks it. Cron runs are at-least-once and may overlap, so a run is
// single-flight per (cron, scheduledTime) through a DB lease, pages through reservations shard by
// shard (ledger/shards.ts: one shard on a single MySQL), and never spends more than
// `maxStatements` round trips (each one is a subrequest; a shard-targeted statement costs two).
// A pending reconcile row is never duplicated: its dedupe_key is UNIQUE, and reservations
// that already have one are not even selected. A page's rows are enqueued one statement per
// tenant (single-shard). When the scan completes within budget, one more statement per shard
// deletes acknowledged outbox rows older than the retention (dead rows are kept). Between the two,
// the queue pass: every tenant with queued admissions gets a dequeue (ledger/queue.ts), the safety
// net of the controller's dequeue after each release; then the capacity moves a crash left halfway
// (an admission's slow path in a request that died: ledger/placement.ts) are rolled forward. First
// of all, the clusters: one whose heartbeat ran out is marked lost (ledger/cluster-failover.ts; every
// controller's supervisor does it within a second, this is the net when none runs), and every
// cluster's shards are brought to its state (a crash between a state change and its shards).
// The budget counts every round trip a pass may spend (never fewer than it spends: the tests count
// the requests).
import { purgeDone } from '../db/outbox.ts';
import { dedupeKey, enqueue } from '../../ledger/outbox.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { claimRun, finishRun, staleReservations, type SweepKey } from '../db/scheduled-runs.ts';
import { dequeueTenant, queuedTenants, WORKER } from '../../ledger/queue.ts';
import { anchorsOf } from '../../ledger/anchors.ts';
import { byWorker, dequeueFair, FAIR_ATTEMPTS } from '../../ledger/queue-fair.ts';
import type { ServiceDeps } from './deps.ts';
import { resumeMoves } from '../../ledger/allotment-moves.ts';
import { markLost, overdueClusters, rollModesForward } from '../../ledger/cluster-failover.ts';

export interface SweepOptions {
  cron: string;
  scheduledTime: number;
  staleAfterMs: number;
  pageSize: number;
  maxStatements: number;
  /** Identifies this run's holder in scheduled_run. */
  holder: string;
  /** How long a claimed run may take before another delivery of it may take over. */
  leaseMs?: number;
  /** Acknowledged outbox rows older than this are deleted (0 keeps them). */
  retentionMs?: number;
}

export interface SweepResult {
  claimed: boolean;
  /** Round trips spent (subrequests). */
  statements: number;
  enqueued: number;
  pages: number;
  purged: number;
  /** True when the scan reached the end of every shard (false: the budget ran out first). */
  complete: boolean;
  /** Queued admissions let in, and expired, by the queue pass. */
  dequeued: number;
  expired: number;
  /** Capacity moves rolled forward (left pending by a crash). */
  resumed: number;
  /** Clusters this run marked lost (their heartbeat older than their lease). */
  lost: number;
}

/** The most round trips one dequeue transaction costs (BEGIN, lock, expire, read, rooms, move, movement, outbox, bypass, usage, room, COMMIT). */
const DEQUEUE_STATEMENTS = 12;
/** Round trips of one `markLost` besides its shards' modes: BEGIN, the locked read, the update, the audit row, COMMIT, the shard list. */
const LOST_STATEMENTS = 6;
/** The most round trips one capacity move's resume costs (two transactions of BEGIN + 2 + COMMIT, and R2's log read on a repeat). */
const MOVE_STATEMENTS = 9;
/** A pending move younger than this may still be finished by the saga that started it. */
const MOVE_RESUME_AFTER_MS = 10_000;

/** Consecutive runs of one tenant, in page order. */
function byTenant(keys: readonly SweepKey[]): SweepKey[][] {
  const groups: SweepKey[][] = [];
  for (const k of keys) {
    const last = groups.at(-1);
    if (last && last[0]!.tenant === k.tenant) last.push(k);
    else groups.push([k]);
  }
  return groups;
}

export async function sweep(deps: ServiceDeps, opts: SweepOptions): Promise<SweepResult> {
  const now = deps.clock();
  const key = { cron: opts.cron, scheduledMs: opts.scheduledTime };
  const lease = new Date(now.getTime() + (opts.leaseMs ?? 5 * 60_000));
  const claim = await claimRun(deps.db, key, opts.holder, now, lease);
  let statements = claim.statements;
  if (!claim.claimed) return { claimed: false, statements, enqueued: 0, pages: 0, purged: 0, complete: true, dequeued: 0, expired: 0, resumed: 0, lost: 0 };

  const shards = await ledgerShards(deps.db);
  statements++;
  const FINISH = 1;
  // The clusters first: a few global statements, and what they change matters most (placements stop
  // going to a cluster whose controller is gone).
  let lost = 0;
  statements++;
  for (const c of await overdueClusters(deps.db)) {
    if (statements + LOST_STATEMENTS + shards.length + FINISH > opts.maxStatements) break;
    if ((await markLost(deps.db, { cluster: c.name, seenEpoch: c.epoch, runner: `cron:${opts.scheduledTime}`, now })).kind === 'lost') lost++;
    statements += LOST_STATEMENTS + shards.length;
  }
  statements += (await rollModesForward(deps.db, now, opts.maxStatements - statements - FINISH)).statements;
  const staleBefore = new Date(now.getTime() - opts.staleAfterMs);
  let enqueued = 0;
  let pages = 0;
  let budgetLeft = true;
  for (const shard of shards) {
    let after: SweepKey | null = null;
    let shardDone = false;
    // A page costs its select plus at least one insert; keep 1 for finishing the run.
    while (!shardDone && (budgetLeft = statements + shard.roundTrips + 1 + FINISH <= opts.maxStatements)) {
      const keys: SweepKey[] = await staleReservations(shard.db, after, staleBefore, opts.pageSize);
      statements += shard.roundTrips;
      pages++;
      for (const group of byTenant(keys)) {
        if (!(budgetLeft = statements + 1 + FINISH <= opts.maxStatements)) break;
        const rows = group.map((k) => ({ tenant: k.tenant, reservationId: k.id, kind: 'reconcile' as const, dedupeKey: dedupeKey.reconcilePending(k.id), requestId: `cron:${opts.scheduledTime}`, cluster: k.cluster }));
        enqueued += await enqueue(deps.db, rows, now);
        statements++;
        after = group.at(-1)!;
      }
      if (!budgetLeft) break;
      shardDone = keys.length < opts.pageSize;
    }
    if (!budgetLeft) break;
  }
  // The queue's safety net, shard by shard within the budget: with clusters registered the shard's
  // fair pass admits (ledger/queue-fair.ts; a room it holds back stays held) and every tenant with
  // queued admissions gets its expiry; without, every such tenant gets its own dequeue (admits what
  // fits now, expires what outlived its TTL). Which of the two is read fresh, one round trip (the
  // placer's cache may be cold): no room for it and a first queue read, no queue pass.
  let dequeued = 0;
  let expired = 0;
  const queuePass = statements + 1 + (shards[0]?.roundTrips ?? 1) + FINISH <= opts.maxStatements;
  const registered = queuePass && (await deps.placer.registered(deps.db, true));
  if (queuePass) statements++;
  const scanned = budgetLeft;
  budgetLeft = queuePass;
  const anchors = registered ? anchorsOf(shards) : [];
  const dequeueOptions = { now: deps.clock, requestId: `cron:${opts.scheduledTime}`, placer: deps.placer };
  for (const [i, shard] of (queuePass ? shards : []).entries()) {
    const anchor = anchors[i];
    // One admission by the fair pass, offered to as many candidates as the budget affords: its reads
    // (the candidates, the rooms), then per candidate its queued count and a dequeue transaction, and
    // one transaction more kept for the count of a pass across tenants.
    const fairRoom = opts.maxStatements - statements - FINISH - (2 * shard.roundTrips + 1);
    const attempts = Math.min(FAIR_ATTEMPTS, Math.floor(fairRoom / (DEQUEUE_STATEMENTS + 1)) - 1);
    if (anchor && attempts >= 1) {
      const r = await dequeueFair(deps.db, anchor, { ...dequeueOptions, byFor: byWorker, maxAdmits: 1, maxAttempts: attempts });
      statements += r.transactions * DEQUEUE_STATEMENTS + r.reads * shard.roundTrips;
      dequeued += r.admitted.length;
      expired += r.expired;
    }
    let after = '';
    for (;;) {
      if (!(budgetLeft = statements + shard.roundTrips + FINISH <= opts.maxStatements)) break;
      const tenants = await queuedTenants(shard.db, after, opts.pageSize);
      statements += shard.roundTrips;
      for (const tenant of tenants) {
        const room = Math.floor((opts.maxStatements - statements - FINISH) / DEQUEUE_STATEMENTS);
        if (!(budgetLeft = room >= 1)) break;
        const r = await dequeueTenant(deps.db, tenant, { ...dequeueOptions, by: WORKER, maxAdmits: room - 1 || 1, admit: !registered });
        statements += r.transactions * DEQUEUE_STATEMENTS;
        dequeued += r.admitted.length;
        expired += r.expired;
        after = tenant;
      }
      if (!budgetLeft || tenants.length < opts.pageSize) break;
    }
    if (!budgetLeft) break;
  }
  let resumed = 0;
  const moves = Math.floor((opts.maxStatements - statements - 1 - FINISH) / MOVE_STATEMENTS);
  if (budgetLeft && moves >= 1) {
    resumed = await resumeMoves(deps.db, { olderThanMs: MOVE_RESUME_AFTER_MS, now: deps.clock, limit: moves });
    statements += 1 + resumed * MOVE_STATEMENTS;
  }
  const complete = scanned && budgetLeft;
  let purged = 0;
  if (complete && opts.retentionMs) {
    for (const shard of shards) {
      if (statements + shard.roundTrips + FINISH > opts.maxStatements) break;
      purged += await purgeDone(shard.db, new Date(now.getTime() - opts.retentionMs), 1000);
      statements += shard.roundTrips;
    }
  }
  statements += FINISH;
  await finishRun(deps.db, key, opts.holder, deps.clock(), statements, enqueued);
  return { claimed: true, statements, enqueued, pages, purged, complete, dequeued, expired, resumed, lost };
}
