// The ModelService status: a PURE function of what was observed (the CR, its Deployment,
// Service and Pods) and the time. Table-tested in status-*.test.ts.
//   Pending      the Deployment does not exist yet, or its controller has not observed it yet
//   Progressing  rolling out toward spec.replicas
//   Running      the Deployment observed its latest generation and updated = available =
//                replicas = spec.replicas (kubectl rollout status' rule), AND the Service's
//                EndpointSlices list a ready endpoint (none needed for 0 replicas)
//   Degraded     a pod is failing (ImagePullBackOff, CrashLoopBackOff, …), a child under our
//                name belongs to someone else, or the spec is invalid
//   Terminating  deletionTimestamp is set
// Conditions Ready/Progressing follow metav1.Condition: lastTransitionTime moves only when the
// condition's status changes. The timeline fields are set once and never moved.
import { ANNOTATIONS, type Condition, type Failure, type ModelServiceStatus, type Phase } from '../../schema/model-service.ts';
import { canonicalJson } from '../../schema/canonical-json.ts';
import { FAILURE_MESSAGE_MAX_CHARS, WAITING_FAILURE_REASONS, type FailureReason } from '../../schema/tenant-errors.ts';
import { printable, printableWithin } from '../../schema/text.ts';
import { prune } from '../runtime/apply.ts';
import { endpointOf, selectorString } from './desired.ts';
import type { ContainerState, Deployment, EndpointSlice, ModelService, Pod, Service } from './types.ts';

/** Waiting reasons of a container that mean it does not start. */
export const FAILURE_REASONS: ReadonlySet<string> = new Set(WAITING_FAILURE_REASONS);

export interface Observed {
  ms: ModelService;
  /** Undefined when the spec is invalid (then `problem` says why). */
  spec: { replicas: number; port: number } | undefined;
  deployment: Deployment | undefined;
  service: Service | undefined;
  pods: Pod[];
  /** The Service's EndpointSlices (the EndpointSlice controller's view of which pods serve). */
  endpointSlices: EndpointSlice[];
  /** A reason the object cannot converge (foreign child, invalid spec): phase Degraded. */
  problem?: { reason: string; message: string };
  now: Date;
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(t: string | Date | undefined): string | undefined {
  if (t === undefined) return undefined;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const earliest = (times: Array<string | undefined>): string | undefined =>
  times
    .map(rfc3339)
    .filter((t): t is string => !!t)
    .sort()[0];

/**
 * The first failing container (pods sorted by name), with the exit code of its last termination;
 * else the first pod the scheduler cannot place (Unschedulable, with the scheduler's reason).
 * A container in CrashLoopBackOff is reported by what ended its last run: OOMKilled as such, and
 * the container's termination message (what the model wrote before it exited) as the message.
 * The reason is one of FAILURE_REASONS (schema/tenant-errors.ts): a termination other than an
 * OOM kill is `Error`. The message is the tenant's or a registry's text: printable (schema/text.ts)
 * and at most FAILURE_MESSAGE_MAX_CHARS characters.
 */
export function podFailure(pods: Pod[]): Failure | undefined {
  const live = pods.filter((p) => !p.metadata.deletionTimestamp).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  for (const pod of live) {
    for (const cs of pod.status?.containerStatuses ?? []) {
      const waiting = cs.state?.waiting;
      const term: ContainerState['terminated'] = cs.state?.terminated ?? cs.lastState?.terminated;
      if (waiting?.reason && FAILURE_REASONS.has(waiting.reason)) {
        const crash = waiting.reason === 'CrashLoopBackOff' ? term : undefined;
        return prune({
          reason: crash?.reason === 'OOMKilled' ? 'OOMKilled' : (waiting.reason as FailureReason),
          message: shown(crash?.message) || shown(waiting.message) || waiting.reason,
          pod: pod.metadata.name,
          container: cs.name,
          exitCode: crash?.exitCode,
        });
      }
      if (cs.state?.terminated && (cs.state.terminated.exitCode ?? 0) !== 0) {
        const t = cs.state.terminated;
        const reason: FailureReason = t.reason === 'OOMKilled' ? 'OOMKilled' : 'Error';
        return prune({ reason, message: shown(t.message) || `exited with code ${t.exitCode}`, pod: pod.metadata.name, container: cs.name, exitCode: t.exitCode });
      }
    }
  }
  for (const pod of live) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
      return prune({ reason: 'Unschedulable', message: shown(scheduled.message) || 'Unschedulable', pod: pod.metadata.name });
    }
  }
  return undefined;
}

/** The API server's refusal of a pod for a ResourceQuota, as the ReplicaSet controller reports it. */
const EXCEEDED_QUOTA = /\bexceeded quota: ([\s\S]+)$/;

/**
 * A pod the Deployment's ReplicaSet could not create (its ReplicaFailure condition, which the
 * Deployment controller copies): `QuotaExceeded` when the tenant namespace's ResourceQuota
 * refused it (what was requested, used and limited), else `FailedCreate` with the API server's
 * words. Without this, pods the cluster refuses would leave a ModelService Progressing forever
 * with nothing to say why.
 */
export function deploymentFailure(d: Deployment | undefined): Failure | undefined {
  const c = d?.status?.conditions?.find((x) => x.type === 'ReplicaFailure' && x.status === 'True');
  if (!c) return undefined;
  const quota = EXCEEDED_QUOTA.exec(c.message ?? '')?.[1];
  if (quota) return { reason: 'QuotaExceeded', message: shown(`the tenant namespace's ResourceQuota refused a pod: exceeded quota: ${quota}`) };
  return { reason: 'FailedCreate', message: shown(c.message) || c.reason || 'FailedCreate' };
}

/** A pod's message as a failure shows it: printable, trimmed, at most FAILURE_MESSAGE_MAX_CHARS characters ('' when none). */
const shown = (message: string | undefined): string => printableWithin(printable(message ?? '').trim(), FAILURE_MESSAGE_MAX_CHARS);

/** The same failure (what, where, how) seen again: its first-seen time is kept. */
const sameFailure = (a: Failure, b: Failure): boolean =>
  a.reason === b.reason && a.pod === b.pod && a.container === b.container && a.exitCode === b.exitCode && a.message === b.message;

/** The failure to report: the current one (first seen now, or when it was first seen), else the last one. */
export function lastFailure(current: Failure | undefined, prev: Failure | undefined, now: Date): Failure | undefined {
  if (!current) return prev;
  return { ...current, at: prev && sameFailure(prev, current) ? prev.at : rfc3339(now) };
}

/** The EndpointSlice controller's annotation: when the change it last reflected happened. */
export const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

/** Ready endpoints across the slices, and the earliest change time of a slice listing one. */
export function readyEndpoints(slices: EndpointSlice[]): { count: number; since: string | undefined } {
  const serving = slices.filter((s) => !s.metadata.deletionTimestamp);
  const counts = serving.map((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length);
  return {
    count: counts.reduce((a, b) => a + b, 0),
    since: earliest(serving.filter((_, i) => counts[i]! > 0).map((s) => s.metadata.annotations?.[TRIGGER_TIME_ANNOTATION])),
  };
}

/** Sets a condition; keeps lastTransitionTime unless the status changed. */
export function setCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition[] {
  const prev = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = prev && prev.status === next.status ? prev.lastTransitionTime : (rfc3339(now) as string);
  const merged = prune({ ...next, lastTransitionTime }) as Condition;
  return prev ? conditions.map((c) => (c.type === next.type ? merged : c)) : [...conditions, merged];
}

export function rolloutComplete(d: Deployment | undefined, desired: number): boolean {
  if (!d?.status || d.status.observedGeneration === undefined) return false;
  const s = d.status;
  return (
    s.observedGeneration! >= (d.metadata.generation ?? 0) &&
    (d.spec?.replicas ?? 1) === desired &&
    (s.updatedReplicas ?? 0) === desired &&
    (s.replicas ?? 0) === desired &&
    (s.availableReplicas ?? 0) === desired
  );
}

export function computeStatus(o: Observed): ModelServiceStatus {
  const { ms, spec, deployment: d, pods } = o;
  const prev = ms.status ?? {};
  const desired = spec?.replicas ?? ms.spec.replicas;
  const available = d?.status?.availableReplicas ?? 0;
  const failure = podFailure(pods) ?? deploymentFailure(d);
  const endpoints = readyEndpoints(o.endpointSlices);
  const rolledOut = rolloutComplete(d, desired);
  // Pods can be Ready while no Service endpoint is (the Service selects nothing, its slices lag).
  const unreachable = rolledOut && desired > 0 && endpoints.count === 0;

  let phase: Phase;
  if (ms.metadata.deletionTimestamp) phase = 'Terminating';
  else if (o.problem) phase = 'Degraded';
  else if (!d?.status || d.status.observedGeneration === undefined) phase = 'Pending';
  else if (rolledOut && !unreachable) phase = 'Running';
  else if (failure) phase = 'Degraded';
  else phase = 'Progressing';

  const gen = ms.metadata.generation;
  const counts = `${available}/${desired} replicas available${unreachable ? ', but the Service has no ready endpoint' : ''}`;
  const why = o.problem ?? (failure ? { reason: failure.reason, message: failure.message } : undefined);
  const ready: Record<Phase, [Condition['status'], string, string]> = {
    Running: ['True', 'AllReplicasAvailable', counts],
    Progressing: ['False', unreachable ? 'NoReadyEndpoints' : 'ReplicasNotAvailable', counts],
    Pending: ['False', 'Pending', 'waiting for the Deployment controller'],
    Degraded: ['False', why?.reason ?? 'Degraded', why?.message ?? counts],
    Terminating: ['False', 'Terminating', 'the ModelService is being deleted'],
  };
  const progressing: Record<Phase, [Condition['status'], string, string]> = {
    Running: ['False', 'RolloutComplete', counts],
    Progressing: ['True', 'RollingOut', counts],
    Pending: ['True', 'Pending', 'waiting for the Deployment controller'],
    Degraded: ['False', why?.reason ?? 'Degraded', why?.message ?? counts],
    Terminating: ['False', 'Terminating', 'the ModelService is being deleted'],
  };
  let conditions = prev.conditions ?? [];
  for (const [type, [status, reason, message]] of [
    ['Ready', ready[phase]],
    ['Progressing', progressing[phase]],
  ] as const) {
    conditions = setCondition(conditions, { type, status, reason, message, observedGeneration: gen }, o.now);
  }

  return prune({
    observedGeneration: gen,
    phase,
    replicas: d?.status?.replicas ?? 0,
    readyReplicas: d?.status?.readyReplicas ?? 0,
    availableReplicas: available,
    selector: selectorString(ms),
    endpoint: o.service && spec ? endpointOf(ms, spec) : prev.endpoint,
    admittedAt: prev.admittedAt ?? rfc3339(ms.metadata.annotations?.[ANNOTATIONS.admittedAt]),
    deliveredAt: prev.deliveredAt ?? rfc3339(ms.metadata.creationTimestamp),
    scheduledAt:
      prev.scheduledAt ??
      earliest(pods.map((p) => p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True')?.lastTransitionTime ?? (p.spec?.nodeName ? p.status?.startTime : undefined))),
    startedAt: prev.startedAt ?? earliest(pods.flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => c.state?.running?.startedAt))),
    readyAt: prev.readyAt ?? (endpoints.count >= 1 ? (endpoints.since ?? rfc3339(o.now)) : undefined),
    lastFailure: lastFailure(failure, prev.lastFailure, o.now),
    conditions,
  });
}

/** Equal after canonical serialisation (key order and undefined fields do not matter). */
export const sameStatus = (a: ModelServiceStatus | undefined, b: ModelServiceStatus | undefined): boolean =>
  canonicalJson(prune(a ?? {})) === canonicalJson(prune(b ?? {}));
