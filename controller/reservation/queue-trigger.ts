// The controller's trigger of the queue: right after a release or a refund commits (quota and a
// cluster room freed), it lets queued admissions in, fenced by its cluster's fence at its epoch. With
// registered clusters the freed room is shared, so the tenants of the releasing tenant's shard are
// offered it in fair order (ledger/queue-fair.ts); without, only the releasing tenant's own quota
// freed up, and its own queue is dequeued (ledger/queue.ts). A failure here undoes nothing of the
// release: it is logged, and the queue sweep, the cron sweep's dequeue (the safety nets) or the
// next release admits them.
import type { Db } from '../../ledger/db.ts';
import { dequeueTenant, queuedTenants, type DequeueOptions } from '../../ledger/queue.ts';
import { dequeueFair, dequeueFor, ofTenant, type FairDequeueResult } from '../../ledger/queue-fair.ts';
import { crashPoint } from '../runtime/crash.ts';
import type { Logger } from '../runtime/log.ts';
import type { LedgerMetrics } from './metrics.ts';
import type { Placer } from '../../ledger/placement.ts';
import type { LeaderFence } from './leader-fence.ts';

export interface QueueTriggerDeps {
  db: Db;
  now: () => Date;
  metrics: LedgerMetrics;
  /** Where an admission leaving the queue goes (ledger/placement.ts). */
  placer: Placer;
  /** This leader's fence: its cluster, and its epoch once a tenant's fence row is raised to it. */
  fence: Pick<LeaderFence, 'cluster' | 'forTenants'>;
}

type Trigger = 'release' | 'refund' | 'sweep';

const options = (d: QueueTriggerDeps, trigger: Trigger): Omit<DequeueOptions, 'by'> => ({
  now: d.now,
  requestId: `controller:${trigger}`,
  beforeCommit: () => crashPoint('inside-dequeue-before-commit'),
  placer: d.placer,
});
const byFor = (d: QueueTriggerDeps) => async (tenant: string) => ({ side: 'controller' as const, cluster: d.fence.cluster, epoch: await d.fence.forTenants([tenant]) });

/** After `tenant`'s release or refund: its shard's fair dequeue with clusters registered, its own queue without (ledger/queue-fair.ts dequeueFor). */
export async function admitFromQueue(d: QueueTriggerDeps, tenant: string, log: Logger, trigger: Exclude<Trigger, 'sweep'>): Promise<void> {
  crashPoint('after-release-before-dequeue');
  try {
    note(d, await dequeueFor(d.db, tenant, { ...options(d, trigger), byFor: byFor(d) }), log, trigger);
  } catch (err) {
    log.warn('dequeue after a quota release failed: the sweeps retry it', { trigger, error: err instanceof Error ? err.message : String(err) });
  }
}

function note(d: QueueTriggerDeps, r: FairDequeueResult, log: Logger, trigger: Trigger): void {
  for (const a of r.admitted) {
    d.metrics.queueAdmitted.inc({ bypass: a.passed ? 'yes' : a.passedAcross ? 'across' : 'no' });
    d.metrics.queueWait.observe(a.waitedMs / 1000);
    log.info('admitted from the queue', { tenant: a.tenant, admissionId: a.id, passed: a.passed, passedAcross: a.passedAcross, waitedMs: a.waitedMs, trigger });
  }
  if (r.expired > 0) d.metrics.queueExpired.inc(r.expired);
  for (const [tenant, queued] of r.queued) d.metrics.queueLength.set({ tenant }, queued);
  if (r.holding) log.debug('cluster room held back for a queued admission (its bypass budget is spent)', { tenant: r.holding.tenant, admissionId: r.holding.id });
}

/**
 * The controller's own safety net (QUEUE_SWEEP_MS), shard by shard: with registered clusters the
 * shard's fair dequeue admits (room freed without a trigger goes in fair order, and a room held back
 * stays held) and every tenant with queued admissions gets its expiry; without, every such tenant gets
 * its own dequeue (expiry, and quota freed without a trigger) — so a
 * controller that died between a release and its dequeue, or a lost trigger, delays a queued
 * admission by one sweep, not until the next cron run.
 */
export async function queueSweepOnce(d: QueueTriggerDeps, log: Logger, signal: AbortSignal): Promise<number> {
  let tenants = 0;
  const db = d.db.withSignal(signal);
  const registered = await d.placer.registered(db, false);
  // The gauge shows the tenants this sweep finds queued; one whose queue emptied drops out.
  d.metrics.queueLength.reset();
  // The placer's shards with their anchors (the controller's one shard cache, controller/reservation/setup.ts).
  for (const at of await d.placer.anchors(db)) {
    signal.throwIfAborted();
    if (registered) await guarded(async () => note(d, await dequeueFair(db, at, { ...options(d, 'sweep'), byFor: byFor(d) }), log, 'sweep'), log);
    let after = '';
    for (;;) {
      signal.throwIfAborted();
      const page = await queuedTenants(at.shard.db.withSignal(signal), after, 100);
      for (const tenant of page) {
        await guarded(async () => note(d, ofTenant(tenant, await dequeueTenant(db, tenant, { ...options(d, 'sweep'), by: await byFor(d)(tenant), admit: !registered })), log, 'sweep'), log);
      }
      tenants += page.length;
      if (page.length < 100) break;
      after = page.at(-1)!;
    }
  }
  return tenants;
}

/** One dequeue of the sweep: its failure is logged and the sweep goes on with the next. */
async function guarded(work: () => Promise<void>, log: Logger): Promise<void> {
  try {
    await work();
  } catch (err) {
    log.warn('queue sweep: a dequeue failed, the next sweep retries it', { error: err instanceof Error ? err.message : String(err) });
  }
}
