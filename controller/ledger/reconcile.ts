// reconcile(tenant/reservation id, key.ts): the one place where the ledger meets the cluster. It runs for
// informer events (CR or labelled pod changed), for outbox rows (create, delete, and the cron's
// reconcile rows), and on resync. The work queue guarantees that one reservation is never
// handled by two workers at once, so a delivery and a delete of the same admission are ordered.
//
//   1. deliver claimed `create` rows (or, for a reservation still `admitted` without one, a
//      claimed `reconcile` row: the cron's safety net re-delivers through it): create the CR
//      under its deterministic name; on AlreadyExists read it back: ours (admission id + tenant)
//      → adopt, else → conflict; then binding + delivered + row done in ONE claim- and
//      epoch-guarded transaction. A delivery that can never succeed (an invalid spec, an image the
//      controller's policy refuses) throws TerminalError: the
//      reservation moves to `conflict` with its reason and the row is dead. Anything else is
//      retried with capped backoff for as long as the reservation is `admitted`;
//   2. one step of the state machine (decide.ts). A delivered/ready reservation is decided on the
//      informer cache (once synced) when the answer is "nothing to do" or "first Ready"; any other
//      action (release path, conflict, deadline, scale revert, a change of replicas) is re-decided
//      on a LIVE read before it is taken; a decrease's refund on live reads of the Deployment and
//      the pods. deleting/releasing/released are decided on live reads of the CR and its pods;
//      admitted and conflict need no read at all;
//   3. acknowledge the claimed delete/reconcile rows (or give them back with backoff).
// No Kubernetes call ever runs inside a SQL transaction.
import type { Db } from '../../ledger/db.ts';
import { modelServiceSpecSchema, RESOURCE_NAMES, RESOURCE_UNITS, type Amounts, type Condition, type ModelService } from '../../schema/model-service.ts';
import type { Result } from '../runtime/controller.ts';
import { crashPoint } from '../runtime/crash.ts';
import { errorMessage, TerminalError } from '../runtime/errors.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Logger } from '../runtime/log.ts';
import { ack, fail, retryDelayMs, type Backoff, type ClaimedRow } from './outbox-store.ts';
import { isOurs, modelServiceFor } from './model-service-object.ts';
import { crNameFor } from '../../schema/admission.ts';
import { imageRefusal, type RegistryRule } from '../../schema/policy.ts';
import { observe, type LedgerCluster } from './cluster.ts';
import { decide, type LedgerAction, type LedgerConfig, type ReleaseBlocker } from './decide.ts';
import type { LedgerMetrics } from './metrics.ts';
import { parseLedgerKey } from './key.ts';
import type { LeaderFence } from './leader-fence.ts';
import { progressChange, progressOf } from './progress.ts';
import { awaitsScaleDown } from './scale.ts';
import { scaleDelta } from '../../schema/scale.ts';
import {
  ackCreate,
  loadLedgerRecord,
  markReady,
  recordProgress,
  recordScaleApplied,
  refundScaleDown,
  release,
  setReleaseBlocked,
  touchReconciled,
  transition,
  type LedgerRecord,
  type ReservationKey,
} from './store.ts';

export interface LedgerDeps {
  db: Db;
  /** The cluster as seen by one reconcile: its calls are aborted with `signal`. */
  cluster: (signal: AbortSignal) => LedgerCluster;
  /** The informer cache's ModelService under a name: null when absent, undefined while not synced. */
  cachedModelService?: (ns: string, name: string) => ModelService | null | undefined;
  /** Namespace new ModelServices are created in. */
  namespace: string;
  /** This leader's fence (leader-fence.ts): the epoch, raised on the tenant's fence row before the first read of it. */
  fence: LeaderFence;
  now: () => Date;
  /** `allowedRegistries`: the controller's own copy of the image policy, re-checked at delivery (none = any). */
  config: LedgerConfig & { outboxBackoff: Backoff; allowedRegistries?: readonly RegistryRule[] };
  /** Outbox rows claimed for a reservation, handed over by the poller. */
  takeClaims: (reservationId: string) => ClaimedRow[];
  /** Hands claimed rows back to the poller unfailed (their failure could not be recorded). */
  keepClaims: (rows: ClaimedRow[]) => void;
  /** The record the poller read with the claim (prefetch.ts), once and while fresh. */
  prefetched?: (key: ReservationKey) => LedgerRecord | undefined;
  metrics: LedgerMetrics;
  events?: EventRecorder;
  log: Logger;
}

/** The deps of one reconcile: every database and API call carries its signal. */
type Scoped = Omit<LedgerDeps, 'cluster'> & { cluster: LedgerCluster };

export function ledgerReconciler(deps: LedgerDeps): (key: string, signal: AbortSignal) => Promise<Result> {
  return async (key, signal) => {
    const at = parseLedgerKey(key);
    if (!at) {
      deps.log.error('ledger key without a tenant: dropped', { key });
      return {};
    }
    const id = at.id;
    const d: Scoped = { ...deps, db: deps.db.withSignal(signal), cluster: deps.cluster(signal) };
    // Only the claims of this key's tenant: a key from a mislabelled object (another tenant) must
    // not acknowledge rows it cannot find the reservation of. The others go back to the poller.
    const taken = d.takeClaims(id);
    const rows = taken.filter((r) => r.tenant === at.tenant);
    if (rows.length < taken.length) d.keepClaims(taken.filter((r) => r.tenant !== at.tenant));
    let log = d.log.child({ admissionId: id, key });
    try {
      // The tenant's fence is raised to this leader's epoch before anything of it is read.
      const epoch = await d.fence.forTenants([at.tenant]);
      // Claimed deliveries only start from the record read with their claim; the rest read now.
      const pre = d.prefetched?.(at);
      let rec = pre && rows.length > 0 && rows.every((r) => r.kind === 'create') ? pre : await loadLedgerRecord(d.db, at);
      const deliveries = deliveryRows(rows, rec);
      for (const row of deliveries) {
        const outcome = await deliver(d, row, rec, log);
        // The CR was just created and nothing else was claimed: the cache has not seen the CR yet,
        // and its informer event brings this key back for the next step (no re-read, no live read).
        if (outcome === 'delivered' && rows.length === 1) return {};
        if (outcome !== 'unchanged') rec = await loadLedgerRecord(d.db, at);
      }
      if (rec) log = log.child({ reqId: rec.requestId });
      const result = rec ? await step(d, rec, epoch, log) : {};
      // Tells the cron sweep this reservation was looked at; at most once a minute (pod events are frequent).
      if (rec && (rec.lastReconciledAt === null || d.now().getTime() - rec.lastReconciledAt.getTime() > 60_000)) {
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

/**
 * The claimed rows that deliver: every `create` row; failing that, while the reservation is
 * still `admitted` (its create row died, or was claimed by nobody in time), one `reconcile` row.
 */
export function deliveryRows(rows: readonly ClaimedRow[], rec: { state: string } | undefined): ClaimedRow[] {
  const creates = rows.filter((r) => r.kind === 'create');
  if (creates.length > 0 || rec?.state !== 'admitted') return creates;
  return rows.filter((r) => r.kind === 'reconcile').slice(0, 1);
}

/**
 * Delivers one claimed row: `delivered` (a new CR is bound, the reservation delivered), `changed`
 * (the ledger changed otherwise — an adopted CR, a conflict: the caller re-reads it) or `unchanged`.
 */
async function deliver(d: Scoped, row: ClaimedRow, rec: LedgerRecord | undefined, parent: Logger): Promise<'delivered' | 'changed' | 'unchanged'> {
  const log = parent.child({ reqId: row.requestId });
  if (!rec || rec.state !== 'admitted') {
    // Deleted before delivery, or delivered by an earlier attempt: the state machine takes it from here.
    await ack(d.db, row, d.now());
    return 'unchanged';
  }
  try {
    return await createAndAck(d, row, rec, log);
  } catch (err) {
    if (!(err instanceof TerminalError)) throw err; // transient: giveBack() retries it with backoff
    await refuse(d, rec, row, err, log);
    return 'changed';
  }
}

/** A delivery that can never succeed: the reservation moves to `conflict` with the reason, the row is dead. */
async function refuse(d: Scoped, rec: LedgerRecord, row: ClaimedRow, err: TerminalError, log: Logger): Promise<void> {
  await toConflict(d, rec, err.message.slice(0, 1000), await d.fence.epoch(), log);
  const now = d.now();
  if ((await fail(d.db, row, `${err.reason}: ${err.message}`, { now, retryAt: now, terminal: true })) === 'dead') {
    d.metrics.deadRows.inc({ kind: row.kind });
    log.error('delivery refused: it cannot succeed', { seq: row.seq, kind: row.kind, reason: err.reason, error: err.message });
  }
}

async function createAndAck(d: Scoped, row: ClaimedRow, rec: LedgerRecord, log: Logger): Promise<'delivered' | 'changed'> {
  const spec = modelServiceSpecSchema.safeParse(rec.spec);
  if (!spec.success) throw new TerminalError('InvalidSpec', `the admitted spec is not a valid ModelService spec: ${spec.error.message}`);
  // The policy may have been tightened since admission: what it now refuses is never created.
  // A conflict without a CR stays deletable by the tenant (its release needs no operator).
  const refusal = imageRefusal(spec.data.image, d.config.allowedRegistries ?? []);
  if (refusal) throw new TerminalError('ImagePolicy', `refused by the image policy at delivery: ${refusal}`);
  const want = modelServiceFor(rec, spec.data, d.namespace);
  const { created, object } = await d.cluster.createModelService(want);
  crashPoint('after-cr-create-before-ack');
  if (!created && !isOurs(object, rec)) {
    await toConflict(d, rec, `a ModelService named ${want.metadata.name} exists and is not this admission's`, await d.fence.epoch(), log);
    await ack(d.db, row, d.now());
    return 'changed';
  }
  await ackCreate(d.db, row, { namespace: d.namespace, name: want.metadata.name, uid: object.metadata.uid ?? '' }, d.now());
  crashPoint('after-ack');
  d.metrics.delivered.inc({ outcome: created ? 'created' : 'adopted' });
  log.info(created ? 'ModelService created' : 'ModelService adopted after AlreadyExists', { name: want.metadata.name, uid: object.metadata.uid });
  // An adopted CR may sit in the cache already (no informer event will bring the key back): step now.
  return created ? 'delivered' : 'changed';
}

/** Actions the informer cache may decide on its own; anything else is confirmed by a live read. */
const CACHE_DECIDES: ReadonlySet<LedgerAction['type']> = new Set(['none', 'markReady']);

async function step(d: Scoped, rec: LedgerRecord, epoch: number, log: Logger): Promise<Result> {
  const ns = rec.binding?.namespace ?? d.namespace;
  const name = rec.binding?.crName ?? crNameFor(rec.id);
  if (rec.state === 'admitted' || rec.state === 'conflict') return {}; // the deliverer's, or the operator's
  const now = d.now();
  const running = rec.state === 'delivered' || rec.state === 'ready';
  // A decrease waiting for its refund is decided on live reads of the Deployment and the pods only.
  const scaleDown = running && awaitsScaleDown(rec.change);
  const cached = running && !scaleDown ? d.cachedModelService?.(ns, name) : undefined;
  let cr: Awaited<ReturnType<LedgerCluster['readModelService']>> = null;
  let action: LedgerAction | undefined;
  if (cached !== undefined) {
    cr = cached ? { ...observe(cached), object: cached } : null;
    action = decide(rec, cr, [], now, d.config);
    if (!CACHE_DECIDES.has(action.type)) action = undefined;
  }
  if (!action) {
    cr = await d.cluster.readModelService(ns, name);
    const needPods = rec.state === 'releasing' || rec.state === 'deleting' || scaleDown;
    const pods = needPods ? await d.cluster.listPods(ns, rec.id) : [];
    const deployment = scaleDown && cr ? await d.cluster.readDeployment(ns, name) : undefined;
    action = decide(rec, cr, pods, now, d.config, deployment);
  }
  if (action.type !== 'none') log.debug('ledger action', { state: rec.state, action: action.type, cached: cached !== undefined });
  if (cr && rec.binding && running && cr.uid === rec.binding.uid && isOurs(cr.object, rec)) {
    const change = progressChange(rec.binding, progressOf(cr.object.status));
    if (change && (await recordProgress(d.db, rec, change, epoch, now))) log.debug('startup progress recorded', { scheduled: !!change.scheduledAt, started: !!change.startedAt, failure: change.lastFailure?.reason });
  }

  switch (action.type) {
    case 'none':
      return action.requeueAfterMs ? { requeueAfterMs: action.requeueAfterMs } : {};
    case 'conflict':
      await toConflict(d, rec, action.reason, epoch, log);
      return {};
    case 'revertScale': {
      const outcome = await d.cluster.scaleModelService(ns, name, action.to, action.resourceVersion);
      if (outcome === 'conflict') return { requeue: true }; // changed since we looked: re-read, re-decide
      if (outcome === 'gone') return { requeue: true };
      d.metrics.scaleReverted.inc();
      const note = `spec.replicas ${action.from} × per-replica resources exceeds the charge (${amountsText(rec.amounts)}): reverted to ${action.to} replicas. Scaling down is allowed; nothing is refunded until the admission is released.`;
      if (cr) d.events?.record(asEventObject(cr.object), 'Warning', 'ExceedsCharge', note);
      log.warn('scale above the charge reverted', { from: action.from, to: action.to });
      return {};
    }
    case 'applyScale': {
      if (action.patch) {
        const outcome = await d.cluster.scaleModelService(ns, name, action.to, action.resourceVersion);
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
      if (await refundScaleDown(d.db, rec, action.generation, delta, epoch, now)) {
        d.metrics.refunded.inc();
        log.info('scale-down refunded: the surplus pods are gone', { generation: action.generation, from: action.from, to: action.to });
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
        const why = action.reason === 'never-ready' ? `never Ready within ${d.config.readyDeadlineMs} ms` : 'deleted by the tenant';
        await transition(d.db, rec, [rec.state], action.thenState, epoch, now, why);
        crashPoint('after-releasing-before-release');
      }
      return { requeueAfterMs: 500 };
    }
    case 'toReleasing':
      await transition(d.db, rec, [rec.state], 'releasing', epoch, now, action.reason);
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
      }
      return {};
  }
}

async function toConflict(d: Scoped, rec: LedgerRecord, reason: string, epoch: number, log: Logger): Promise<void> {
  if (!(await transition(d.db, rec, [rec.state], 'conflict', epoch, d.now(), reason))) return;
  d.metrics.conflicts.inc();
  log.warn('reservation in conflict: an operator must look', { reason });
  const ns = rec.binding?.namespace ?? d.namespace;
  const cr = await d.cluster.readModelService(ns, rec.binding?.crName ?? crNameFor(rec.id)).catch(() => null);
  if (cr) d.events?.record(asEventObject(cr.object), 'Warning', 'LedgerConflict', reason);
}

const asEventObject = (ms: ModelService): Parameters<EventRecorder['record']>[0] => ms as Parameters<EventRecorder['record']>[0];

const amountsText = (a: Amounts): string =>
  RESOURCE_NAMES.filter((r) => a[r] > 0)
    .map((r) => `${r} ${a[r]} ${RESOURCE_UNITS[r].unit}`)
    .join(', ') || 'nothing';

/** True when the ledger already records exactly this blocker. */
function sameBlocker(rec: LedgerRecord, b: ReleaseBlocker): boolean {
  return (
    rec.releaseBlockedReason === b.reason &&
    (rec.releaseBlockedPods ?? []).join() === b.pods.join() &&
    (rec.releaseBlockedFinalizers ?? []).join() === b.finalizers.join()
  );
}

function releaseBlocked(b: ReleaseBlocker, since: Date): Condition {
  const message =
    b.reason === 'Finalizers'
      ? `quota kept: no pod left, but the ModelService stays in deletion; finalizers: ${b.finalizers.join(', ') || '(none)'}`
      : `quota kept: ${b.pods.length} pod(s) still exist: ${b.pods.join(', ')}`;
  return { type: 'ReleaseBlocked', status: 'True', reason: b.reason, message: message.slice(0, 1000), lastTransitionTime: since.toISOString() };
}

/**
 * Gives the claimed rows back after a failed reconcile: retried with capped backoff, dead only
 * when the error is terminal. Returns the rows whose failure could not be recorded.
 */
async function giveBack(d: Scoped, rows: ClaimedRow[], err: unknown, log: Logger): Promise<ClaimedRow[]> {
  const now = d.now();
  const terminal = err instanceof TerminalError;
  const unrecorded: ClaimedRow[] = [];
  for (const row of rows) {
    // A row whose claim was lost matches nothing here (fail() requires the claim): harmless.
    const retryAt = new Date(now.getTime() + retryDelayMs(row.attempts + 1, d.config.outboxBackoff));
    const outcome = await fail(d.db, row, errorMessage(err), { now, retryAt, terminal }).catch(() => {
      unrecorded.push(row);
      return 'unknown';
    });
    if (outcome === 'dead') {
      d.metrics.deadRows.inc({ kind: row.kind });
      log.error('outbox row is dead: its error cannot be retried away', { seq: row.seq, kind: row.kind, error: errorMessage(err) });
    } else if (outcome === 'retry') {
      log.info('outbox row retried later', { seq: row.seq, kind: row.kind, attempt: row.attempts + 1, retryAt: retryAt.toISOString() });
    }
  }
  return unrecorded;
}
