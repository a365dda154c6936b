// scheduled(): the safety net. Enqueues one `reconcile` outbox row per non-terminal
// reservation that has not been reconciled (or created) for `staleAfterMs`, so the in-cluster
// controller re-checks it. Cron runs are at-least-once and may overlap, so a run is
// single-flight per (cron, scheduledTime) through a DB lease, pages through reservations by
// id, and never spends more than `maxStatements` statements (each one is a subrequest).
// A pending reconcile row is never duplicated: its dedupe_key is UNIQUE, and reservations
// that already have one are not even selected. When the scan completes within budget, one more
// statement deletes acknowledged outbox rows older than the retention (dead rows are kept).
import { enqueue, purgeDone } from '../db/outbox.ts';
import { dedupeKey } from '../../ledger/outbox.ts';
import { claimRun, finishRun, staleReservations } from '../db/scheduled-runs.ts';
import type { ServiceDeps } from './deps.ts';

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
  statements: number;
  enqueued: number;
  pages: number;
  purged: number;
  /** True when the scan reached the end (false: the budget ran out first). */
  complete: boolean;
}

export async function sweep(deps: ServiceDeps, opts: SweepOptions): Promise<SweepResult> {
  const now = deps.clock();
  const key = { cron: opts.cron, scheduledMs: opts.scheduledTime };
  const lease = new Date(now.getTime() + (opts.leaseMs ?? 5 * 60_000));
  const claim = await claimRun(deps.db, key, opts.holder, now, lease);
  let statements = claim.statements;
  if (!claim.claimed) return { claimed: false, statements, enqueued: 0, pages: 0, purged: 0, complete: true };

  const staleBefore = new Date(now.getTime() - opts.staleAfterMs);
  let after = '';
  let enqueued = 0;
  let pages = 0;
  let complete = false;
  // A page costs 2 statements (select + insert); keep 1 for finishing the run.
  while (statements + 3 <= opts.maxStatements) {
    const ids = await staleReservations(deps.db, after, staleBefore, opts.pageSize);
    statements++;
    pages++;
    if (ids.length > 0) {
      const rows = ids.map((id) => ({ reservationId: id, kind: 'reconcile' as const, dedupeKey: dedupeKey.reconcilePending(id), requestId: `cron:${opts.scheduledTime}` }));
      enqueued += await enqueue(deps.db, rows, now);
      statements++;
    }
    const last = ids.at(-1);
    if (ids.length < opts.pageSize || !last) {
      complete = true;
      break;
    }
    after = last;
  }
  let purged = 0;
  if (complete && opts.retentionMs && statements + 2 <= opts.maxStatements) {
    purged = await purgeDone(deps.db, new Date(now.getTime() - opts.retentionMs), 1000);
    statements++;
  }
  statements++;
  await finishRun(deps.db, key, opts.holder, deps.clock(), statements, enqueued);
  return { claimed: true, statements, enqueued, pages, purged, complete };
}
