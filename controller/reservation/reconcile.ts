// The ledger reconciler (controller/runtime/controller.ts calls it): the one place where the
// ledger meets the cluster. Its key is `<tenant>/<reservation id>` (key.ts). It runs for
// informer events (CR or labelled pod changed), for outbox rows (create, delete, and the cron's
// reconcile rows), and on resync. The work queue guarantees that one reservation is never
// handled by two workers at once, so a delivery and a delete of the same admission are ordered.
//   1. deliver the claimed `create` rows (or, for a reservation still `admitted` without one, a
//      claimed `reconcile` row: the cron's safety net re-delivers through it) — deliver.ts;
//   2. one step of the state machine — step.ts;
//   3. acknowledge the other claimed rows; when the reconcile fails, give them all back with
//      backoff (deliver.ts giveBack).
import type { ReconcileContext, Reconcile, Request, Result } from '../runtime/controller.ts';
import { deliver, deliveryRows, giveBack } from './deliver.ts';
import { parseReservationKey } from './key.ts';
import { ack } from './outbox-store.ts';
import type { ReservationDeps, ReconcileScope } from './reconcile-deps.ts';
import { loadReservationRecord } from './record.ts';
import { step } from './step.ts';
import { touchReconciled } from './transitions.ts';

/** How often a reservation is marked looked at for the cron sweep, at most (pod events are frequent). */
const TOUCH_EVERY_MS = 60_000;

export function reservationReconciler(deps: ReservationDeps): Reconcile {
  return async function reconcileLedger(req: Request, ctx: ReconcileContext): Promise<Result> {
    const at = parseReservationKey(req.key);
    if (!at) {
      deps.log.error('ledger key without a tenant: dropped', { key: req.key });
      return {};
    }
    const d: ReconcileScope = { ...deps, db: deps.db.withSignal(ctx.signal), cluster: deps.cluster(ctx.signal) };
    // Only the claims of this key's tenant: a key from a mislabelled object (another tenant) must
    // not acknowledge rows it cannot find the reservation of. The others go back to the poller.
    const taken = d.takeClaims(at.id);
    const rows = taken.filter((r) => r.tenant === at.tenant);
    if (rows.length < taken.length) d.keepClaims(taken.filter((r) => r.tenant !== at.tenant));
    let log = d.log.child({ admissionId: at.id, key: req.key });
    try {
      // The tenant's fence is raised to this leader's epoch before anything of it is read.
      const epoch = await d.fence.forTenants([at.tenant]);
      // Claimed deliveries only start from the record read with their claim; the rest read now.
      const pre = d.prefetched?.(at);
      let rec = pre && rows.length > 0 && rows.every((r) => r.kind === 'create') ? pre : await loadReservationRecord(d.db, at);
      const deliveries = deliveryRows(rows, rec);
      for (const row of deliveries) {
        const outcome = await deliver(d, row, rec, log);
        // The CR was just created and nothing else was claimed: the next step comes with the CR's
        // first news (its informer add event, at the create's own resourceVersion, is not
        // requeued: own-creations.ts), or at the never-Ready deadline, whichever is first.
        if (outcome === 'delivered' && rows.length === 1) return { requeueAfterMs: d.config.readyDeadlineMs };
        if (outcome !== 'unchanged') rec = await loadReservationRecord(d.db, at);
      }
      if (rec) log = log.child({ reqId: rec.requestId });
      const result = rec ? await step(d, rec, epoch, log) : {};
      if (rec && (rec.lastReconciledAt === null || d.now().getTime() - rec.lastReconciledAt.getTime() > TOUCH_EVERY_MS)) {
        await touchReconciled(d.db, at, epoch, d.now());
      }
      for (const row of rows.filter((r) => !deliveries.includes(r))) await ack(d.db, row, d.now());
      return result;
    } catch (err) {
      // Rows whose failure could not be written (the database is down) stay ours until their
      // claim runs out: the key's next retry takes them again, rather than waiting for the lease.
      d.keepClaims(await giveBack(d, rows, err, log));
      throw err;
    }
  };
}
