// The controller's trigger of the queue: right after a release or a refund commits (quota freed),
// it lets the tenant's queued admissions in (ledger/queue.ts), fenced by its cluster's fence at its epoch. A failure
// here undoes nothing of the release: it is logged, and the cron sweep's dequeue (the safety net)
// or the next release admits them.
import type { Db } from '../../ledger/db.ts';
import type { LedgerShard } from '../../ledger/shards.ts';
import { dequeueTenant, queuedTenants } from '../../ledger/queue.ts';
import { crashPoint } from '../runtime/crash.ts';
import type { Logger } from '../runtime/log.ts';
import type { LedgerMetrics } from './metrics.ts';
import type { Placer } from '../../ledger/placement.ts';

export interface QueueTriggerDeps {
  db: Db;
  now: () => Date;
  metrics: LedgerMetrics;
  /** Where an admission leaving the queue goes (ledger/placement.ts). */
  placer: Placer;
}

/** The leader that dequeues: its cluster and epoch (its fence, ledger/fence.ts). */
export interface Dequeuing {
  cluster: string;
  epoch: number;
}

export async function admitFromQueue(d: QueueTriggerDeps, tenant: string, by: Dequeuing, log: Logger, trigger: 'release' | 'refund' | 'sweep'): Promise<void> {
  if (trigger !== 'sweep') crashPoint('after-release-before-dequeue');
  try {
    const r = await dequeueTenant(d.db, tenant, {
      by: { side: 'controller', ...by },
      now: d.now,
      requestId: `controller:${trigger}`,
      beforeCommit: () => crashPoint('inside-dequeue-before-commit'),
      placer: d.placer,
    });
    for (const a of r.admitted) {
      d.metrics.queueAdmitted.inc({ bypass: a.passed ? 'yes' : 'no' });
      d.metrics.queueWait.observe(a.waitedMs / 1000);
      log.info('admitted from the queue', { admissionId: a.id, passed: a.passed, waitedMs: a.waitedMs, trigger });
    }
    if (r.expired > 0) d.metrics.queueExpired.inc(r.expired);
    d.metrics.queueLength.set({ tenant }, r.queued);
    if (r.waiting) log.debug('queue head waits', { head: r.waiting.head, held: r.waiting.held, short: r.waiting.short });
  } catch (err) {
    log.warn('dequeue after a quota release failed: the cron sweep retries it', { trigger, error: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * The controller's own safety net (QUEUE_SWEEP_MS): every tenant with queued admissions, shard by
 * shard, gets a dequeue — so a controller that died between a release and its dequeue, or a lost
 * trigger, delays a queued admission by one sweep, not until the next cron run.
 */
export async function queueSweepOnce(
  d: QueueTriggerDeps & { shards: () => Promise<LedgerShard[]>; cluster: string; epochFor: (tenant: string) => Promise<number> },
  log: Logger,
  signal: AbortSignal,
): Promise<number> {
  let tenants = 0;
  // The gauge shows the tenants this sweep finds queued; one whose queue emptied drops out.
  d.metrics.queueLength.reset();
  for (const shard of await d.shards()) {
    let after = '';
    for (;;) {
      signal.throwIfAborted();
      const page = await queuedTenants(shard.db.withSignal(signal), after, 100);
      for (const tenant of page) await admitFromQueue({ ...d, db: d.db.withSignal(signal) }, tenant, { cluster: d.cluster, epoch: await d.epochFor(tenant) }, log, 'sweep');
      tenants += page.length;
      if (page.length < 100) break;
      after = page.at(-1)!;
    }
  }
  return tenants;
}
