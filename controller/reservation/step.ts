// One step of a reservation's state machine: observe the CR (and, where the decision needs
// them, its pods and Deployment), decide (decide.ts, pure) and perform the one action decided.
// A delivered/ready reservation is decided on the informer cache (once synced) when the answer
// is "nothing to do" or "first Ready"; any other action (release path, conflict, deadline, scale
// revert, a change of replicas) is re-decided on a LIVE read before it is taken; a decrease's
// refund on live reads of the Deployment and the pods. deleting/releasing/released are decided on
// live reads of the CR and its pods; admitted and conflict need no read at all.
// No Kubernetes call runs inside a SQL transaction.
import { crNameFor, NEVER_CHARGED_STATES } from '../../schema/admission.ts';
import { modelServiceSpecSchema, RESOURCE_NAMES, RESOURCE_UNITS, type Amounts, type Condition, type ModelService } from '../../schema/model-service.ts';
import { scaleDelta } from '../../schema/scale.ts';
import { lastErrorText, type LastError } from '../../schema/tenant-errors.ts';
import type { Result } from '../runtime/controller.ts';
import { crashPoint } from '../runtime/crash.ts';
import { TerminalError } from '../runtime/errors.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Logger } from '../runtime/log.ts';
import { observe, type ReservationCluster } from './cluster.ts';
import { decide, type LedgerAction, type ReleaseBlocker } from './decide.ts';
import { stepLeftover } from './leftover.ts';
import { isOurs } from './model-service-object.ts';
import { recordStartupProgress } from './progress-write.ts';
import { release, refundScaleDown } from './quota-moves.ts';
import { admitFromQueue } from './queue-trigger.ts';
import type { ReconcileScope } from './reconcile-deps.ts';
import type { ReservationRecord } from './record.ts';
import { awaitsScaleDown } from './scale.ts';
import { SHOWN_DELETED, SHOWN_DELETED_OUTSIDE, shownConflict, shownNeverReady } from './shown-errors.ts';
import { markReady, recordScaleApplied, setReleaseBlocked, transition } from './transitions.ts';

/** Actions the informer cache may decide on its own; anything else is confirmed by a live read. */
const CACHE_DECIDES: ReadonlySet<LedgerAction['type']> = new Set(['none', 'markReady']);

type ObservedModelService = Awaited<ReturnType<ReservationCluster['readModelService']>>;

/** Decides the reservation's next action and performs it; the result tells the work queue when to look again. */
export async function step(d: ReconcileScope, rec: ReservationRecord, epoch: number, log: Logger): Promise<Result> {
  const ns = rec.binding?.namespace ?? d.namespaceFor(rec.tenant);
  const name = rec.binding?.crName ?? crNameFor(rec.id);
  // Placed on another cluster (a failover moved it away): what is left of it here is a leftover.
  if (rec.cluster !== d.fence.cluster) return stepLeftover(d, rec, epoch, log);
  // The deliverer's, the operator's, or never delivered (queued, cancelled, expired).
  if (rec.state === 'admitted' || rec.state === 'conflict' || (NEVER_CHARGED_STATES as readonly string[]).includes(rec.state)) return {};
  const now = d.now();
  const apiServerNow = d.apiServerNow?.() ?? now;
  const running = rec.state === 'delivered' || rec.state === 'ready';
  // A decrease waiting for its refund is decided on live reads of the Deployment and the pods only.
  const scaleDown = running && awaitsScaleDown(rec.change);
  const cached = running && !scaleDown ? d.cachedModelService?.(ns, name) : undefined;
  let cr: ObservedModelService = null;
  let action: LedgerAction | undefined;
  if (cached !== undefined) {
    cr = cached ? { ...observe(cached), object: cached } : null;
    action = decide(rec, cr, [], now, d.config, undefined, apiServerNow);
    if (!CACHE_DECIDES.has(action.type)) action = undefined;
  }
  if (!action) {
    cr = await d.cluster.readModelService(ns, name);
    const needPods = rec.state === 'releasing' || rec.state === 'deleting' || scaleDown;
    const pods = needPods ? await d.cluster.listPods(ns, rec.id) : [];
    const deployment = scaleDown && cr ? await d.cluster.readDeployment(ns, name) : undefined;
    action = decide(rec, cr, pods, now, d.config, deployment, apiServerNow);
  }
  if (action.type !== 'none') log.debug('ledger action', { state: rec.state, action: action.type, cached: cached !== undefined });
  // Never in the way of the action: a progress write that fails is logged and the step acts.
  if (cr && rec.binding && running && cr.uid === rec.binding.uid && isOurs(cr.object, rec)) await recordStartupProgress(d, rec, cr.object.status, epoch, now, log);
  return act(d, { rec, cr, ns, name, epoch, now, log }, action);
}

interface Step {
  rec: ReservationRecord;
  /** The CR the action was decided on (null: none under the name). */
  cr: ObservedModelService;
  ns: string;
  name: string;
  epoch: number;
  now: Date;
  log: Logger;
}

/** Performs the decided action. */
async function act(d: ReconcileScope, s: Step, action: LedgerAction): Promise<Result> {
  const { rec, cr, ns, name, epoch, now, log } = s;
  switch (action.type) {
    case 'none':
      return action.requeueAfterMs ? { requeueAfterMs: action.requeueAfterMs } : {};
    case 'conflict':
      await toConflict(d, rec, { detail: action.reason, shown: shownConflict(rec, cr) }, epoch, log);
      return {};
    case 'revertScale': {
      const outcome = await d.cluster.scaleModelService(ns, name, action.to, action.resourceVersion);
      if (outcome === 'conflict') return { requeue: true }; // changed since we looked: re-read, re-decide
      if (outcome === 'gone') return { requeue: true };
      d.metrics.scaleReverted.inc();
      if (cr) d.events?.record(asEventObject(cr.object), 'Warning', 'ExceedsCharge', exceedsChargeNote(action.from, action.to, rec.amounts));
      log.warn('scale above the charge reverted', { from: action.from, to: action.to });
      return {};
    }
    case 'applyScale': {
      if (action.patch) {
        const outcome = await d.cluster.scaleModelService(ns, name, action.to, action.resourceVersion, action.autoscale);
        if (outcome !== 'scaled') return { requeue: true }; // changed or gone since we looked: re-read, re-decide
        crashPoint('after-cr-scale-before-ack');
        log.info('replicas changed on the ModelService', { generation: action.generation, replicas: action.to });
      }
      if (await recordScaleApplied(d.db, rec, action.generation, action.settles, epoch, now)) {
        log.info(action.settles ? 'change of replicas applied and settled' : 'change of replicas applied: the refund waits for the surplus pods', {
          generation: action.generation,
        });
      }
      return { requeue: true };
    }
    case 'awaitScaleDown':
      return { requeueAfterMs: action.requeueAfterMs };
    case 'refund': {
      const spec = modelServiceSpecSchema.safeParse(rec.spec);
      if (!spec.success) throw new TerminalError('InvalidSpec', `the stored spec cannot be read to refund change ${action.generation}: ${spec.error.message}`);
      const delta = scaleDelta(spec.data, action.from, action.to);
      if (await refundScaleDown(d.db, rec, action.generation, delta, epoch, now, rec.room)) {
        d.metrics.refunded.inc();
        log.info('scale-down refunded: the surplus pods are gone', { generation: action.generation, from: action.from, to: action.to });
        await admitFromQueue(d, rec.tenant, log, 'refund');
      }
      return { requeue: true };
    }
    case 'markReady':
      if (await markReady(d.db, rec, epoch, now)) log.info('first Ready recorded');
      return {};
    case 'deleteCR': {
      const pre = action.reason === 'never-ready' ? { uid: action.uid, resourceVersion: action.resourceVersion } : { uid: action.uid };
      if (action.reason === 'never-ready' && cr) {
        d.events?.record(asEventObject(cr.object), 'Warning', 'NeverReady', `not Ready within ${d.config.readyDeadlineMs} ms of creation: deleting, quota released once its pods are gone`);
      }
      const outcome = await d.cluster.deleteModelService(ns, name, pre);
      crashPoint('after-cr-delete-before-state');
      log.info('ModelService delete issued', { reason: action.reason, outcome, uid: action.uid });
      if (outcome === 'precondition-failed') return { requeue: true }; // changed since we looked: re-read, re-decide
      if (action.thenState) {
        const shown = action.reason === 'never-ready' ? shownNeverReady(d.config.readyDeadlineMs) : SHOWN_DELETED;
        await transition(d.db, rec, [rec.state], action.thenState, epoch, now, lastErrorText(shown));
        crashPoint('after-releasing-before-release');
      }
      return { requeueAfterMs: 500 };
    }
    case 'toReleasing':
      await transition(d.db, rec, [rec.state], 'releasing', epoch, now, lastErrorText(rec.state === 'deleting' ? SHOWN_DELETED : SHOWN_DELETED_OUTSIDE));
      log.info('releasing: the ModelService is gone or going', { reason: action.reason });
      crashPoint('after-releasing-before-release');
      return { requeue: true };
    case 'waitForRelease': {
      const b = action.blocker;
      if (action.blockedSince && !sameBlocker(rec, b)) {
        // The condition first: the ledger's record is what says "done", so a condition write that
        // fails (a 409 while the ModelService controller updates the CR) is retried with it.
        await d.cluster.setCondition(ns, name, releaseBlocked(b, action.blockedSince));
        await setReleaseBlocked(d.db, rec, action.blockedSince, b, epoch, now);
        if (rec.releaseBlockedReason !== b.reason) d.metrics.releaseBlocked.inc({ reason: b.reason });
        log.warn(`release blocked: ${b.reason === 'Finalizers' ? 'the ModelService stays in deletion' : 'pods still exist'}`, {
          reason: b.reason,
          pods: b.pods,
          finalizers: b.finalizers,
          since: action.blockedSince.toISOString(),
        });
      }
      return { requeueAfterMs: action.requeueAfterMs };
    }
    case 'release':
      if (await release(d.db, rec, epoch, now)) {
        d.metrics.released.inc();
        log.info('quota released');
        await admitFromQueue(d, rec.tenant, log, 'release');
      }
      return {};
  }
}

/** Why a reservation moves to `conflict`: the detail for the log and the Warning event, and what the tenant is shown (lastError). */
export interface ConflictReason {
  detail: string;
  shown: LastError;
}

/** Moves the reservation to `conflict` (fenced, from the state it was read in) and surfaces it: metric, log, Warning event on the CR. */
export async function toConflict(d: ReconcileScope, rec: ReservationRecord, why: ConflictReason, epoch: number, log: Logger): Promise<void> {
  if (!(await transition(d.db, rec, [rec.state], 'conflict', epoch, d.now(), lastErrorText(why.shown)))) return;
  d.metrics.conflicts.inc();
  log.warn('reservation in conflict: an operator must look', { reason: why.detail, code: why.shown.code });
  const ns = rec.binding?.namespace ?? d.namespaceFor(rec.tenant);
  const cr = await d.cluster.readModelService(ns, rec.binding?.crName ?? crNameFor(rec.id)).catch(() => null);
  if (cr) d.events?.record(asEventObject(cr.object), 'Warning', 'LedgerConflict', why.detail);
}

const asEventObject = (ms: ModelService): Parameters<EventRecorder['record']>[0] => ms as Parameters<EventRecorder['record']>[0];

const amountsText = (a: Amounts): string =>
  RESOURCE_NAMES.filter((r) => a[r] > 0)
    .map((r) => `${r} ${a[r]} ${RESOURCE_UNITS[r].unit}`)
    .join(', ') || 'nothing';

/** The ExceedsCharge event's text: the replicas asked for, the charge, the replicas reverted to. */
const exceedsChargeNote = (from: number, to: number, charged: Amounts): string =>
  `spec.replicas ${from} × per-replica resources exceeds the charge (${amountsText(charged)}): reverted to ${to} replicas. Scaling down is allowed; nothing is refunded until the admission is released.`;

/** True when the ledger already records exactly this blocker. */
function sameBlocker(rec: ReservationRecord, b: ReleaseBlocker): boolean {
  return (
    rec.releaseBlockedReason === b.reason &&
    (rec.releaseBlockedPods ?? []).join() === b.pods.join() &&
    (rec.releaseBlockedFinalizers ?? []).join() === b.finalizers.join()
  );
}

/** The ReleaseBlocked condition set on the CR while a release waits: what blocks it, since when. */
function releaseBlocked(b: ReleaseBlocker, since: Date): Condition {
  const message =
    b.reason === 'Finalizers'
      ? `quota kept: no pod left, but the ModelService stays in deletion; finalizers: ${b.finalizers.join(', ') || '(none)'}`
      : `quota kept: ${b.pods.length} pod(s) still exist: ${b.pods.join(', ')}`;
  return { type: 'ReleaseBlocked', status: 'True', reason: b.reason, message: message.slice(0, 1000), lastTransitionTime: since.toISOString() };
}
