// The ModelService reconciler: level-based, one key at a time, reading the whole current state
// (cache, or the API server after a conflict) and writing only the difference:
//   1. gone → nothing to do (children carry ownerReferences: the garbage collector has them);
//   2. deletionTimestamp → phase Terminating; delete the Deployment/Service this object
//      CONTROLS (Foreground, preconditions.uid); requeue until a live read shows them gone;
//      then remove the finalizer (merge patch guarded by resourceVersion);
//   3. ensure the finalizer (first write, guarded by resourceVersion);
//   4. createOrPatch Deployment and Service, together (they are independent); a same-named child
//      controlled by someone else is never touched (phase Degraded, reason ChildConflict);
//      placement the operator dropped is removed from the Deployment first (placementCleanup: a
//      merge patch cannot drop a field by omission);
//   5. status from computeStatus() (with the Service's EndpointSlices: Ready needs a ready endpoint); written (PUT /status with resourceVersion) only if different,
//      and, with a status hold (the shipped controller's: setup.ts), a rollout's in-between step
//      that is not news only when the children's next report has not come within a bound
//      (status-hold.ts: the key is requeued for then).
// Events are recorded on transitions only: children created (one Event), a phase change worth
// telling (newsworthy: not the first rollout's Pending → Progressing steps).
import { API_VERSION, FINALIZER, KIND, LABELS, modelServiceSpecSchema, type ModelServiceSpec, type ModelServiceStatus, type Phase } from '../../schema/model-service.ts';
import { createOrPatch, type ApplyResult } from '../runtime/apply.ts';
import type { ReconcileContext, Reconcile, Request, Result } from '../runtime/controller.ts';
import { crashPoint } from '../runtime/crash.ts';
import { isConflict, isNotFound, TerminalError } from '../runtime/errors.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { paths, type KubeClient } from '../runtime/kube.ts';
import type { WriteTracker } from '../runtime/read-your-writes.ts';
import type { Placement } from '../../schema/placement.ts';
import { desiredDeployment, desiredService, invalidName, isControlledBy, placementCleanup } from './desired.ts';
import { liveReader, type Reader } from './reader.ts';
import { computeStatus, sameStatus } from './status.ts';
import { StatusHold } from './status-hold.ts';
import type { Deployment, ModelService, Service } from './types.ts';

export interface ModelServiceReconcilerDeps {
  client: KubeClient;
  /** Informer-backed reads; live reads (after a conflict, on the deletion path) go to the API server. */
  cache: Reader;
  events: EventRecorder;
  /** Told about every object a write returned (read-your-writes over the cache). */
  tracker?: WriteTracker;
  now?: () => Date;
  /** How often to look again while children are being deleted or a foreign child blocks us. */
  pollMs?: number;
  /** The operator's placement of tenant pods (node selector, tolerations, affinity); none by default. */
  placement?: Placement;
  /** How long a rollout's in-between status waits for the children's next report (status-hold.ts); none by default (every change written at once), STATUS_HOLD_MS in the shipped controller (setup.ts). */
  statusHoldMs?: StatusHoldMs;
  /** Monotonic milliseconds, for the status hold. */
  monotonicNow?: () => number;
}

export interface StatusHoldMs {
  /** Pending: until the Deployment controller's first report on a new Deployment. */
  pending: number;
  /** Progressing: until the next step of the rollout. */
  progressing: number;
}

/** The shipped hold: the Deployment controller reports on a new Deployment within milliseconds unless it is overloaded or down; a rollout step is batched like EndpointSlice updates. */
export const STATUS_HOLD_MS: StatusHoldMs = { pending: 10_000, progressing: 2_000 };

export function modelServiceReconciler(deps: ModelServiceReconcilerDeps): Reconcile {
  const now = deps.now ?? (() => new Date());
  const pollMs = deps.pollMs ?? 1000;
  const holdMs = deps.statusHoldMs ?? { pending: 0, progressing: 0 };
  const hold = new StatusHold({ pendingMs: holdMs.pending, progressingMs: holdMs.progressing, now: deps.monotonicNow });

  return async function reconcileModelService(req: Request, ctx: ReconcileContext): Promise<Result> {
    // Every API call of this reconcile is aborted with it (shutdown), on top of its own deadline.
    const client = deps.client.withSignal(ctx.signal);
    const live = liveReader(client);
    const read = ctx.fresh ? live : deps.cache;
    const ms = await read.modelService(req.namespace, req.name);
    if (!ms) {
      hold.release(req.key);
      return {};
    }
    const log = ctx.log.child({ admissionId: ms.metadata.labels?.[LABELS.admissionId], uid: ms.metadata.uid });
    const obj = { ...ms, apiVersion: API_VERSION, kind: KIND } as ModelService;

    if (ms.metadata.deletionTimestamp) {
      hold.release(req.key);
      return finalize(obj, log);
    }

    const parsed = modelServiceSpecSchema.safeParse(ms.spec);
    const badName = invalidName(ms.metadata.name);
    if (!parsed.success || badName) {
      const message = badName ?? parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') ?? 'invalid';
      await writeStatus(obj, { spec: undefined, deployment: undefined, service: undefined, pods: [], endpointSlices: [], problem: { reason: 'InvalidSpec', message } });
      throw new TerminalError('InvalidSpec', message);
    }
    const spec: ModelServiceSpec = parsed.data;

    let current = obj;
    if (!(current.metadata.finalizers ?? []).includes(FINALIZER)) {
      current = await client.mergePatch<ModelService>(paths.modelService(req.namespace, req.name), {
        metadata: { finalizers: [...(current.metadata.finalizers ?? []), FINALIZER], resourceVersion: current.metadata.resourceVersion },
      });
      deps.tracker?.wrote('ModelService', current);
      log.info('finalizer added');
    }

    const problems: string[] = [];
    const ensure = async <T extends KubeObject>(kind: 'Deployment' | 'Service', collection: string, desired: T, live: T | undefined, cleanup?: (desired: T, live: T) => object | undefined) => {
      if (live && !isControlledBy(live, current)) {
        problems.push(`${kind} ${live.metadata.name} exists and is not controlled by this ModelService`);
        return { result: 'unchanged' as ApplyResult, object: undefined };
      }
      const removal = live && cleanup?.(desired, live);
      if (removal) {
        live = await client.mergePatch<T>(`${collection}/${desired.metadata.name}`, removal);
        deps.tracker?.wrote(kind, live);
        log.info(`${kind} placement removed`, { name: desired.metadata.name });
      }
      const res = await createOrPatch({ client, collection, desired, live });
      if (res.result !== 'unchanged') deps.tracker?.wrote(kind, res.object);
      if (res.result !== 'unchanged') log.info(`${kind} ${res.result}`, { name: desired.metadata.name });
      return res;
    };

    // The two children are independent: both writes are sent together (a new ModelService's first
    // reconcile costs one API round trip, not two), and the reconcile returns only once both have
    // answered, so no write of this key is still in flight when its next reconcile starts.
    const liveDep = await read.deployment(req.namespace, req.name);
    const liveSvc = await read.service(req.namespace, req.name);
    const [dep, svc] = await settledBoth(
      ensure('Deployment', paths.deployments(req.namespace), desiredDeployment(current, spec, deps.placement), liveDep, placementCleanup).then((r) => {
        if (r.result === 'created') crashPoint('after-deployment-create');
        return r;
      }),
      ensure('Service', paths.services(req.namespace), desiredService(current, spec), liveSvc),
    );
    // One Event for the children this reconcile created (both, on a new ModelService), in a fixed order.
    const created = [dep.result === 'created' && `Deployment ${req.name}`, svc.result === 'created' && `Service ${req.name}`].filter((c) => c !== false);
    if (created.length) deps.events.record(current, 'Normal', 'Created', `Created ${created.join(' and ')}`, 'Create');
    const pods = await read.pods(req.namespace, req.name);
    const endpointSlices = svc.object ? await read.endpointSlices(req.namespace, req.name) : [];

    const problem = problems.length ? { reason: 'ChildConflict', message: problems.join('; ') } : undefined;
    if (problem) deps.events.record(current, 'Warning', 'ChildConflict', problem.message, 'Reconcile');
    const status = computeStatus({ ms: current, spec, deployment: dep.object as Deployment | undefined, service: svc.object as Service | undefined, pods, endpointSlices, problem, now: now() });
    // A step that is news (newsworthy: Running, Degraded, a fall back from Running) is written at once.
    const held = sameStatus(current.status, status) || newsworthy(current.status?.phase, status.phase) ? hold.release(req.key) : hold.holdMs(req.key, status.phase);
    if (held > 0) return { requeueAfterMs: held };
    await putStatus(current, status);
    // A foreign child carries none of our labels, so no event will tell us it went away: poll slowly.
    return problem ? { requeueAfterMs: 30 * pollMs } : {};

    async function writeStatus(target: ModelService, o: Omit<Parameters<typeof computeStatus>[0], 'ms' | 'now'>): Promise<ModelService> {
      return putStatus(target, computeStatus({ ...o, ms: target, now: now() }));
    }

    /** PUT /status (guarded by resourceVersion) when `status` differs from the stored one; the Event of a phase change worth telling. */
    async function putStatus(target: ModelService, status: ModelServiceStatus): Promise<ModelService> {
      if (sameStatus(target.status, status)) return target;
      const written = await client.replace<ModelService>(`${paths.modelService(req.namespace, req.name)}/status`, {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: target.metadata.name, namespace: target.metadata.namespace, resourceVersion: target.metadata.resourceVersion },
        status,
      });
      deps.tracker?.wrote('ModelService', written);
      const before = target.status?.phase;
      if (before !== status.phase) {
        log.info('phase changed', { from: before, to: status.phase, observedGeneration: status.observedGeneration });
        const ready = status.conditions?.find((c) => c.type === 'Ready');
        if (newsworthy(before, status.phase)) deps.events.record(target, status.phase === 'Degraded' ? 'Warning' : 'Normal', status.phase ?? 'Unknown', ready?.message ?? '', 'Reconcile');
      }
      return written;
    }

    async function finalize(target: ModelService, flog: typeof log): Promise<Result> {
      if (!(target.metadata.finalizers ?? []).includes(FINALIZER)) return {};
      // The cache may lag behind a delete: decide on a live read.
      const children: Array<[string, KubeObject | undefined, string]> = [
        ['Deployment', await live.deployment(req.namespace, req.name), paths.deployment(req.namespace, req.name)],
        ['Service', await live.service(req.namespace, req.name), paths.service(req.namespace, req.name)],
      ];
      let waiting = false;
      for (const [kind, child, path] of children) {
        if (!child || !isControlledBy(child, target)) continue; // absent, or someone else's: never deleted
        waiting = true;
        if (child.metadata.deletionTimestamp) continue;
        try {
          await client.delete(path, { propagationPolicy: 'Foreground', preconditions: { uid: child.metadata.uid } });
          flog.info(`${kind} deleted (foreground)`, { name: child.metadata.name, childUid: child.metadata.uid });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err; // 409: the name now holds another object — not ours
        }
      }
      if (target.status?.phase !== 'Terminating') {
        target = await writeStatus(target, { spec: undefined, deployment: undefined, service: undefined, pods: [], endpointSlices: [] });
      }
      if (waiting) return { requeueAfterMs: pollMs };
      const patched = await client.mergePatch<ModelService>(paths.modelService(req.namespace, req.name), {
        metadata: { finalizers: (target.metadata.finalizers ?? []).filter((f) => f !== FINALIZER), resourceVersion: target.metadata.resourceVersion },
      });
      deps.tracker?.wrote('ModelService', patched);
      flog.info('children gone; finalizer removed');
      return {};
    }
  };
}

/** Both values once both promises have settled (never one still running); the first rejection, in argument order, if any. */
async function settledBoth<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

/**
 * Whether a phase change gets an Event: every change except the steps of a first rollout that has
 * not run yet (none → Pending → Progressing: the `Created` Event already said it started). Running,
 * Degraded, Terminating, and falling back from Running, always do.
 */
export function newsworthy(before: Phase | undefined, after: Phase | undefined): boolean {
  const starting = (p: Phase | undefined) => p === undefined || p === 'Pending' || p === 'Progressing';
  return !(starting(before) && (after === 'Pending' || after === 'Progressing'));
}
