// The controller's trigger of the queue: right after a release or a refund commits (quota freed),
// it lets the tenant's queued admissions in (ledger/queue.ts), fenced by its epoch. A failure
// here undoes nothing of the release: it is logged, and the cron sweep's dequeue (the safety net)
// or the next release admits them.
import { dequeueTenant } from '../../ledger/queue.ts';
import { crashPoint } from '../runtime/crash.ts';
import type { Logger } from '../runtime/log.ts';
import type { ReconcileScope } from './reconcile-deps.ts';

export async function admitFromQueue(d: ReconcileScope, tenant: string, epoch: number, log: Logger, trigger: 'release' | 'refund'): Promise<void> {
  crashPoint('after-release-before-dequeue');
  try {
    const r = await dequeueTenant(d.db, tenant, {
      by: { side: 'controller', epoch },
      now: d.now,
      requestId: `controller:${trigger}`,
      beforeCommit: () => crashPoint('inside-dequeue-before-commit'),
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
