import { describe, expect, it } from 'vitest';
import type { ModelService, ModelServiceStatus } from '../../schema/model-service.ts';
import { computeStatus, FAILURE_REASONS, lastFailure, podFailure, readyEndpoints, rfc3339, rolloutComplete, sameStatus, setCondition } from './status.ts';
import type { Deployment, EndpointSlice, Pod } from './types.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:01:00Z');

const ms = (o: { generation?: number; status?: ModelServiceStatus; deleting?: boolean; annotations?: Record<string, string> } = {}): ModelService => ({
  apiVersion: 'modeldock.io/v1alpha1',
  kind: 'ModelService',
  metadata: {
    name: 'a',
    namespace: 'lab',
    uid: 'u',
    generation: o.generation ?? 1,
    creationTimestamp: '2025-12-31T23:59:00Z',
    annotations: o.annotations,
    deletionTimestamp: o.deleting ? '2026-01-01T00:00:30Z' : undefined,
  },
  spec: { image: 'x/y:1', replicas: 2, port: 8000, resources: { cpu: '100m', memory: '128Mi' }, env: [], args: [], readinessPath: '/healthz' },
  status: o.status,
});

const dep = (s: Partial<NonNullable<Deployment['status']>>, generation = 1, replicas = 2): Deployment => ({
  metadata: { name: 'a', generation },
  spec: { replicas },
  status: { observedGeneration: generation, ...s },
});
const done = dep({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });

const pod = (name: string, cs: NonNullable<Pod['status']>['containerStatuses'] = [], extra: Partial<NonNullable<Pod['status']>> = {}): Pod => ({
  metadata: { name },
  spec: { nodeName: 'n' },
  status: { containerStatuses: cs, ...extra },
});
const pullBackOff = pod('p1', [{ name: 'model', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } }]);
const crashLoop = pod('p2', [{ name: 'model', restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } }]);

const spec = { replicas: 2, port: 8000 };
const svc = { metadata: { name: 'a' } };
/** A slice of the Service `a` listing `ready` ready endpoints (and one not ready). */
const slice = (ready: number, triggerTime?: string): EndpointSlice => ({
  metadata: { name: `a-${ready}`, labels: { 'kubernetes.io/service-name': 'a' }, annotations: triggerTime ? { 'endpoints.kubernetes.io/last-change-trigger-time': triggerTime } : undefined },
  endpoints: [...Array.from({ length: ready }, (_, i) => ({ addresses: [`10.0.0.${i}`], conditions: { ready: true } })), { addresses: ['10.0.1.1'], conditions: { ready: false } }],
});
const slices = [slice(2)];

describe('computeStatus phase', () => {
  it.each([
    ['no Deployment yet → Pending', { deployment: undefined }, 'Pending'],
    ['Deployment not observed by its controller → Pending', { deployment: { metadata: { name: 'a', generation: 1 }, spec: { replicas: 2 } } }, 'Pending'],
    ['Deployment with a status but no observedGeneration → Pending', { deployment: { metadata: { name: 'a', generation: 1 }, spec: { replicas: 2 }, status: { replicas: 2, updatedReplicas: 2, availableReplicas: 2 } } }, 'Pending'],
    ['rolling out → Progressing', { deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }) }, 'Progressing'],
    ['latest generation not observed → Progressing', { deployment: { ...done, metadata: { name: 'a', generation: 2 } } }, 'Progressing'],
    ['old replicas still around → Progressing', { deployment: dep({ replicas: 3, updatedReplicas: 2, availableReplicas: 2 }) }, 'Progressing'],
    ['Deployment scaled by hand (spec differs) → Progressing', { deployment: dep({ replicas: 0, updatedReplicas: 0, availableReplicas: 0 }, 1, 0) }, 'Progressing'],
    ['updated = available = desired → Running', { deployment: done }, 'Running'],
    ['rolled out but the Service has no ready endpoint → Progressing', { deployment: done, endpointSlices: [slice(0)] }, 'Progressing'],
    ['rolled out, no EndpointSlice at all → Progressing', { deployment: done, endpointSlices: [] }, 'Progressing'],
    ['0 replicas rolled out needs no endpoint → Running', { deployment: dep({}, 1, 0), spec: { replicas: 0, port: 8000 }, endpointSlices: [] }, 'Running'],
    ['a pod in ImagePullBackOff while not converged → Degraded', { deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 0 }), pods: [pullBackOff] }, 'Degraded'],
    ['a foreign child → Degraded', { deployment: done, problem: { reason: 'ChildConflict', message: 'x' } }, 'Degraded'],
  ])('%s', (_n, o, phase) => {
    const s = computeStatus({ ms: ms(), spec, service: svc, endpointSlices: slices, pods: [], now: T0, ...o } as Parameters<typeof computeStatus>[0]);
    expect(s.phase).toBe(phase);
    expect(s.observedGeneration).toBe(1);
  });

  it('deletionTimestamp → Terminating', () => {
    expect(computeStatus({ ms: ms({ deleting: true }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T0 }).phase).toBe('Terminating');
  });
});

describe('computeStatus fields', () => {
  it('fills counts, selector, endpoint, observedGeneration and Ready/Progressing conditions', () => {
    const s = computeStatus({ ms: ms({ generation: 3 }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T0 });
    expect(s).toMatchObject({
      observedGeneration: 3,
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      selector: 'app.kubernetes.io/managed-by=modeldock,modeldock.io/model-service=a',
      endpoint: 'http://a.lab.svc:8000',
    });
    expect(s.conditions).toEqual([
      { type: 'Ready', status: 'True', reason: 'AllReplicasAvailable', message: '2/2 replicas available', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: '2/2 replicas available', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
  });

  it('lastTransitionTime moves only on a real transition', () => {
    const first = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }), service: svc, endpointSlices: slices, pods: [], now: T0 });
    const again = computeStatus({ ms: ms({ status: first }), spec, deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 0 }), service: svc, endpointSlices: slices, pods: [], now: T1 });
    expect(again.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(again.conditions?.find((c) => c.type === 'Ready')?.message).toBe('0/2 replicas available');
    const ready = computeStatus({ ms: ms({ status: again }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T1 });
    expect(ready.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:01:00Z' });
  });

  it('an identical observation gives an identical status (so it is not written)', () => {
    const a = computeStatus({ ms: ms(), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T0 });
    const b = computeStatus({ ms: ms({ status: a }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T1 });
    expect(sameStatus(a, b)).toBe(true);
  });

  it('timeline: admittedAt from the annotation, deliveredAt, scheduledAt, startedAt, readyAt; never moved back', () => {
    const p = pod('p', [{ name: 'model', ready: true, state: { running: { startedAt: '2026-01-01T00:00:05Z' } } }], {
      startTime: '2026-01-01T00:00:03Z',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:02Z' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:07Z' },
      ],
    });
    const s = computeStatus({ ms: ms({ annotations: { 'modeldock.io/admitted-at': '2025-12-31T23:58:00.123Z' } }), spec, deployment: done, service: svc, endpointSlices: [slice(1, '2026-01-01T00:00:07Z')], pods: [p], now: T0 });
    expect(s).toMatchObject({
      admittedAt: '2025-12-31T23:58:00Z',
      deliveredAt: '2025-12-31T23:59:00Z',
      scheduledAt: '2026-01-01T00:00:02Z',
      startedAt: '2026-01-01T00:00:05Z',
      readyAt: '2026-01-01T00:00:07Z',
    });
    const later = pod('q', [{ name: 'model', state: { running: { startedAt: '2026-01-01T00:00:01Z' } } }]);
    const s2 = computeStatus({ ms: ms({ status: s }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [later], now: T1 });
    expect(s2.startedAt).toBe('2026-01-01T00:00:05Z');
    expect(s2.readyAt).toBe('2026-01-01T00:00:07Z');
  });

  it('no readyAt before a Service endpoint is ready, whatever the Deployment counts', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: done, service: svc, endpointSlices: [slice(0)], pods: [], now: T0 });
    expect(s.readyAt).toBeUndefined();
  });
});

describe('podFailure', () => {
  it.each([
    ['ImagePullBackOff', [pullBackOff], { reason: 'ImagePullBackOff', message: 'Back-off pulling image', pod: 'p1', container: 'model' }],
    ['CrashLoopBackOff carries the last exit code', [crashLoop], { reason: 'CrashLoopBackOff', message: 'back-off', pod: 'p2', container: 'model', exitCode: 1 }],
    ['first failing pod by name', [crashLoop, pullBackOff], { reason: 'ImagePullBackOff', pod: 'p1' }],
    ['a healthy pod is no failure', [pod('ok', [{ name: 'model', ready: true, state: { running: {} } }])], undefined],
    ['a terminating pod is ignored', [{ ...pullBackOff, metadata: { name: 'p1', deletionTimestamp: 'x' } }], undefined],
  ])('%s', (_n, pods, expected) => {
    const f = podFailure(pods);
    if (expected === undefined) expect(f).toBeUndefined();
    else expect(f).toMatchObject(expected);
  });

  it('lastFailure.at: when the failure was first seen; kept while it is the same failure, moved for a new one', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2 }), service: svc, endpointSlices: slices, pods: [pullBackOff], now: T0 });
    expect(s.lastFailure).toEqual({ reason: 'ImagePullBackOff', message: 'Back-off pulling image', pod: 'p1', container: 'model', at: '2026-01-01T00:00:00Z' });
    const same = computeStatus({ ms: ms({ status: s }), spec, deployment: dep({ replicas: 2, updatedReplicas: 2 }), service: svc, endpointSlices: slices, pods: [pullBackOff], now: T1 });
    expect(same.lastFailure?.at).toBe('2026-01-01T00:00:00Z');
    const other = computeStatus({ ms: ms({ status: s }), spec, deployment: dep({ replicas: 2, updatedReplicas: 2 }), service: svc, endpointSlices: slices, pods: [crashLoop], now: T1 });
    expect(other.lastFailure).toMatchObject({ reason: 'CrashLoopBackOff', pod: 'p2', at: '2026-01-01T00:01:00Z' });
  });
  it.each([
    ['reason', { reason: 'ErrImagePull' }],
    ['pod', { pod: 'p9' }],
    ['container', { container: 'other' }],
    ['exit code', { exitCode: 2 }],
    ['message', { message: 'another' }],
  ])('lastFailure: a different %s is a new failure', (_n, change) => {
    const first = { reason: 'CrashLoopBackOff', message: 'm', pod: 'p', container: 'model', exitCode: 1 };
    const prev = { ...first, at: '2020-01-01T00:00:00Z' };
    expect(lastFailure({ ...first, ...change }, prev, T1)?.at).toBe('2026-01-01T00:01:00Z');
    expect(lastFailure(first, prev, T1)?.at).toBe('2020-01-01T00:00:00Z');
    expect(lastFailure(undefined, prev, T1)).toBe(prev);
  });
  it('lastFailure stays after the failure cleared (the most recent failure seen)', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2 }), service: svc, endpointSlices: slices, pods: [crashLoop], now: T0 });
    expect(s.lastFailure).toMatchObject({ reason: 'CrashLoopBackOff', exitCode: 1 });
    const s2 = computeStatus({ ms: ms({ status: s }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T1 });
    expect(s2.phase).toBe('Running');
    expect(s2.lastFailure).toMatchObject({ reason: 'CrashLoopBackOff' });
  });
});

describe('helpers', () => {
  it('rfc3339 normalises to second precision', () => {
    expect(rfc3339('2026-01-01T00:00:00.000Z')).toBe('2026-01-01T00:00:00Z');
    expect(rfc3339('garbage')).toBeUndefined();
  });
  it('setCondition appends or replaces, keeping lastTransitionTime for the same status', () => {
    const c1 = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: 'm' }, T0);
    const c2 = setCondition(c1, { type: 'Ready', status: 'False', reason: 'B', message: 'n' }, T1);
    expect(c2).toEqual([{ type: 'Ready', status: 'False', reason: 'B', message: 'n', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  });
});

// Cases that pin what the mutation run (npm run mutation, docs/mutation.md) found unpinned.
describe('readyEndpoints', () => {
  it('counts endpoints whose ready condition is true, across slices; a slice being deleted counts nothing', () => {
    const gone = { ...slice(3, '2026-01-01T00:00:01Z'), metadata: { ...slice(3).metadata, name: 'gone', deletionTimestamp: '2026-01-01T00:00:00Z', annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-01-01T00:00:01Z' } } };
    const unknown: EndpointSlice = { metadata: { name: 'u' }, endpoints: [{ addresses: ['10.0.2.1'] }, { addresses: ['10.0.2.2'], conditions: { serving: true } }] };
    expect(readyEndpoints([slice(2, '2026-01-01T00:00:05Z'), slice(1), gone, unknown])).toEqual({ count: 3, since: '2026-01-01T00:00:05Z' });
    expect(readyEndpoints([])).toEqual({ count: 0, since: undefined });
    expect(readyEndpoints([slice(0, '2026-01-01T00:00:02Z')])).toEqual({ count: 0, since: undefined });
  });
});

describe('computeStatus conditions per phase', () => {
  const cond = (s: ModelServiceStatus, type: string) => {
    const c = s.conditions?.find((x) => x.type === type);
    return c && [c.status, c.reason, c.message];
  };
  it.each([
    ['Pending', { deployment: undefined }, ['False', 'Pending', 'waiting for the Deployment controller'], ['True', 'Pending', 'waiting for the Deployment controller']],
    ['Progressing', { deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }) }, ['False', 'ReplicasNotAvailable', '1/2 replicas available'], ['True', 'RollingOut', '1/2 replicas available']],
    ['Degraded by a pod', { deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 0 }), pods: [pullBackOff] }, ['False', 'ImagePullBackOff', 'Back-off pulling image'], ['False', 'ImagePullBackOff', 'Back-off pulling image']],
    ['Degraded by a problem', { deployment: done, problem: { reason: 'ChildConflict', message: 'x' } }, ['False', 'ChildConflict', 'x'], ['False', 'ChildConflict', 'x']],
    [
      'Progressing: every replica available, no ready endpoint',
      { deployment: done, endpointSlices: [slice(0)] },
      ['False', 'NoReadyEndpoints', '2/2 replicas available, but the Service has no ready endpoint'],
      ['True', 'RollingOut', '2/2 replicas available, but the Service has no ready endpoint'],
    ],
    ['Terminating', { ms: ms({ deleting: true }), deployment: done }, ['False', 'Terminating', 'the ModelService is being deleted'], ['False', 'Terminating', 'the ModelService is being deleted']],
  ])('%s', (_n, o, ready, progressing) => {
    const s = computeStatus({ ms: ms(), spec, service: svc, endpointSlices: slices, pods: [], now: T0, ...o } as Parameters<typeof computeStatus>[0]);
    expect(cond(s, 'Ready')).toEqual(ready);
    expect(cond(s, 'Progressing')).toEqual(progressing);
  });
  it('Running even while a pod of an old ReplicaSet fails (the rollout rule wins)', () => {
    expect(computeStatus({ ms: ms(), spec, deployment: done, service: svc, endpointSlices: slices, pods: [pullBackOff], now: T0 }).phase).toBe('Running');
  });
  it('an invalid spec (spec undefined) counts the CR replicas and keeps the last endpoint', () => {
    const prev = { endpoint: 'http://a.lab.svc:7000' };
    const s = computeStatus({ ms: ms({ status: prev }), spec: undefined, deployment: undefined, service: svc, endpointSlices: slices, pods: [], now: T0, problem: { reason: 'InvalidSpec', message: 'bad' } });
    expect(s.endpoint).toBe('http://a.lab.svc:7000');
    expect(cond(s, 'Ready')).toEqual(['False', 'InvalidSpec', 'bad']);
    const counted = computeStatus({ ms: ms(), spec: undefined, deployment: dep({ availableReplicas: 1 }), service: svc, endpointSlices: slices, pods: [], now: T0 });
    expect(cond(counted, 'Ready')?.[2]).toBe('1/2 replicas available');
  });
  it('no Service yet: no endpoint', () => {
    expect(computeStatus({ ms: ms(), spec, deployment: done, service: undefined, endpointSlices: [], pods: [], now: T0 }).endpoint).toBeUndefined();
  });
  it('zero counts when the Deployment reports none', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: dep({}), service: svc, endpointSlices: slices, pods: [], now: T0 });
    expect(s).toMatchObject({ replicas: 0, readyReplicas: 0, availableReplicas: 0, phase: 'Progressing' });
  });
});

describe('rolloutComplete', () => {
  it.each([
    ['complete', done, 2, true],
    ['no status', { metadata: { name: 'a' } }, 2, false],
    ['status without observedGeneration', { metadata: { name: 'a' }, status: { replicas: 2, updatedReplicas: 2, availableReplicas: 2 } }, 2, false],
    ['observed a newer generation than the metadata says', { ...done, metadata: { name: 'a', generation: 1 }, status: { ...done.status, observedGeneration: 2 } }, 2, true],
    ['observed an older generation', { ...done, metadata: { name: 'a', generation: 3 } }, 2, false],
    ['no generation in metadata', { ...done, metadata: { name: 'a' } }, 2, true],
    ['spec.replicas defaults to 1', { metadata: { name: 'a' }, spec: {}, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 } }, 1, true],
    ['spec.replicas default 1 is not 2', { metadata: { name: 'a' }, spec: {}, status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } }, 2, false],
    ['updated short', dep({ replicas: 2, updatedReplicas: 1, availableReplicas: 2 }), 2, false],
    ['replicas short', dep({ replicas: 1, updatedReplicas: 2, availableReplicas: 2 }), 2, false],
    ['available short', dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }), 2, false],
    ['zero of zero, counts missing', dep({}, 1, 0), 0, true],
  ])('%s', (_n, d, desired, want) => expect(rolloutComplete(d as Deployment, desired)).toBe(want));
});

describe('podFailure: every failure reason, and terminations', () => {
  it.each([...FAILURE_REASONS])('%s is a failure', (reason) => {
    expect(podFailure([pod('p', [{ name: 'model', state: { waiting: { reason } } }])])).toEqual({ reason, message: reason, pod: 'p', container: 'model' });
  });
  it('a waiting reason that is not a failure (ContainerCreating) is none', () => {
    expect(podFailure([pod('p', [{ name: 'model', state: { waiting: { reason: 'ContainerCreating' } } }])])).toBeUndefined();
    expect(podFailure([pod('p', [{ name: 'model', state: { waiting: {} } }])])).toBeUndefined();
  });
  it('CrashLoopBackOff takes the exit code of the current termination first, then the last one', () => {
    const cs = { name: 'model', state: { waiting: { reason: 'CrashLoopBackOff' }, terminated: { exitCode: 3 } }, lastState: { terminated: { exitCode: 1 } } };
    expect(podFailure([pod('p', [cs])])).toMatchObject({ exitCode: 3 });
    expect(podFailure([pod('p', [{ ...cs, state: { waiting: { reason: 'CrashLoopBackOff' } } }])])).toMatchObject({ exitCode: 1 });
  });
  it('only CrashLoopBackOff carries the exit code of a termination: an image pull failure after a run does not', () => {
    const cs = { name: 'model', state: { waiting: { reason: 'ImagePullBackOff', message: 'pull' } }, lastState: { terminated: { exitCode: 1 } } };
    expect(podFailure([pod('p', [cs])])).toEqual({ reason: 'ImagePullBackOff', message: 'pull', pod: 'p', container: 'model' });
  });
  it('a container terminated with a non-zero code is a failure; code 0 or none is not', () => {
    expect(podFailure([pod('p', [{ name: 'model', state: { terminated: { exitCode: 2 } } }])])).toEqual({ reason: 'Error', message: 'exited with code 2', pod: 'p', container: 'model', exitCode: 2 });
    expect(podFailure([pod('p', [{ name: 'model', state: { terminated: { exitCode: 137, reason: 'OOMKilled', message: 'oom' } } }])])).toEqual({ reason: 'OOMKilled', message: 'oom', pod: 'p', container: 'model', exitCode: 137 });
    expect(podFailure([pod('p', [{ name: 'model', state: { terminated: { exitCode: 0, reason: 'Completed' } } }])])).toBeUndefined();
    expect(podFailure([pod('p', [{ name: 'model', state: { terminated: {} } }])])).toBeUndefined();
  });
  it('CrashLoopBackOff after an OOM kill is reported as OOMKilled, with its exit code', () => {
    const cs = { name: 'model', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } }, lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } } };
    expect(podFailure([pod('p', [cs])])).toEqual({ reason: 'OOMKilled', message: 'back-off 10s', pod: 'p', container: 'model', exitCode: 137 });
  });
  it("CrashLoopBackOff shows the last run's termination message (trimmed), else the back-off message", () => {
    const cs = { name: 'model', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } }, lastState: { terminated: { exitCode: 3, reason: 'Error', message: 'weights corrupt\n' } } };
    expect(podFailure([pod('p', [cs])])).toEqual({ reason: 'CrashLoopBackOff', message: 'weights corrupt', pod: 'p', container: 'model', exitCode: 3 });
    const blank = { ...cs, lastState: { terminated: { exitCode: 3, reason: 'Error', message: ' ' } } };
    expect(podFailure([pod('p', [blank])])).toMatchObject({ message: 'back-off 10s' });
  });
  it('a terminated container with a blank termination message says its exit code', () => {
    expect(podFailure([pod('p', [{ name: 'model', state: { terminated: { exitCode: 2, message: '\n' } } }])])).toMatchObject({ message: 'exited with code 2' });
  });
  it("a pod the scheduler cannot place is reported with the scheduler's reason, after any failing container", () => {
    const pending: Pod = { metadata: { name: 'a' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available: 1 Insufficient cpu.' }] } };
    expect(podFailure([pending])).toEqual({ reason: 'Unschedulable', message: '0/2 nodes are available: 1 Insufficient cpu.', pod: 'a' });
    const failing = pod('b', [{ name: 'model', state: { waiting: { reason: 'ErrImagePull' } } }]);
    expect(podFailure([pending, failing])).toMatchObject({ reason: 'ErrImagePull', pod: 'b' });
    const scheduling: Pod = { metadata: { name: 'a' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] } };
    expect(podFailure([scheduling])).toBeUndefined();
    const noMessage: Pod = { metadata: { name: 'a' }, status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } };
    expect(podFailure([noMessage])).toEqual({ reason: 'Unschedulable', message: 'Unschedulable', pod: 'a' });
    const placed: Pod = { metadata: { name: 'a' }, status: { conditions: [{ type: 'PodScheduled', status: 'True', reason: 'Unschedulable' }] } };
    expect(podFailure([placed])).toBeUndefined();
  });
  it('pods are looked at in name order whatever the input order', () => {
    const b = pod('b', [{ name: 'model', state: { waiting: { reason: 'ErrImagePull' } } }]);
    const a = pod('a', [{ name: 'model', state: { waiting: { reason: 'CrashLoopBackOff' } } }]);
    expect(podFailure([b, a])?.pod).toBe('a');
    expect(podFailure([a, b])?.pod).toBe('a');
  });
});

describe('timeline details', () => {
  it('scheduledAt: earliest PodScheduled, else the start time of a pod bound to a node; never from an unbound pod', () => {
    const bound = pod('b', [], { startTime: '2026-01-01T00:00:09Z' });
    const unbound: Pod = { metadata: { name: 'u' }, spec: {}, status: { startTime: '2026-01-01T00:00:01Z' } };
    const sched = pod('s', [], { conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:04Z' }] });
    const notYet = pod('n', [], { startTime: '2026-01-01T00:00:08Z', conditions: [{ type: 'PodScheduled', status: 'False', lastTransitionTime: '2026-01-01T00:00:02Z' }] });
    const at = (pods: Pod[]) => computeStatus({ ms: ms(), spec, deployment: done, service: svc, endpointSlices: slices, pods, now: T0 }).scheduledAt;
    expect(at([bound, unbound])).toBe('2026-01-01T00:00:09Z');
    expect(at([unbound])).toBeUndefined();
    expect(at([bound, sched])).toBe('2026-01-01T00:00:04Z');
    expect(at([sched, bound])).toBe('2026-01-01T00:00:04Z');
    expect(at([notYet])).toBe('2026-01-01T00:00:08Z');
    const initializedFirst = pod('i', [], {
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:05Z' },
      ],
    });
    expect(at([initializedFirst])).toBe('2026-01-01T00:00:05Z');
  });
  it('readyAt: the earliest change time of a slice listing a ready endpoint, else now; kept once set', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: done, service: svc, endpointSlices: [slice(1, '2026-01-01T00:00:09Z'), slice(0, '2026-01-01T00:00:01Z'), slice(2, '2026-01-01T00:00:03Z')], pods: [], now: T1 });
    expect(s.readyAt).toBe('2026-01-01T00:00:03Z');
    expect(computeStatus({ ms: ms(), spec, deployment: done, service: svc, endpointSlices: slices, pods: [], now: T1 }).readyAt).toBe('2026-01-01T00:01:00Z');
    expect(computeStatus({ ms: ms({ status: s }), spec, deployment: done, service: svc, endpointSlices: [slice(0)], pods: [], now: T1 }).readyAt).toBe('2026-01-01T00:00:03Z');
  });
  it('admittedAt and deliveredAt are kept once set', () => {
    const prev = { admittedAt: '2020-01-01T00:00:00Z', deliveredAt: '2020-01-01T00:00:01Z', scheduledAt: '2020-01-01T00:00:02Z' };
    const s = computeStatus({ ms: ms({ status: prev, annotations: { 'modeldock.io/admitted-at': '2026-01-01T00:00:00Z' } }), spec, deployment: done, service: svc, endpointSlices: slices, pods: [pod('p', [], { startTime: '2026-01-01T00:00:00Z' })], now: T0 });
    expect(s).toMatchObject(prev);
  });
  it('rfc3339 takes Dates and leaves undefined alone', () => {
    expect(rfc3339(new Date('2026-01-01T00:00:00.999Z'))).toBe('2026-01-01T00:00:00Z');
    expect(rfc3339(undefined)).toBeUndefined();
  });
});

describe('setCondition and sameStatus', () => {
  it('a status change moves lastTransitionTime; another type is appended, the first kept', () => {
    const c1 = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: 'm' }, T0);
    expect(setCondition(c1, { type: 'Ready', status: 'True', reason: 'B', message: 'n' }, T1)).toEqual([
      { type: 'Ready', status: 'True', reason: 'B', message: 'n', lastTransitionTime: '2026-01-01T00:01:00Z' },
    ]);
    expect(setCondition(c1, { type: 'Progressing', status: 'True', reason: 'C', message: 'o' }, T1)).toEqual([
      c1[0],
      { type: 'Progressing', status: 'True', reason: 'C', message: 'o', lastTransitionTime: '2026-01-01T00:01:00Z' },
    ]);
  });
  it('sameStatus: a field that differs is a change; undefined and {} are the same', () => {
    expect(sameStatus({ phase: 'Running' }, { phase: 'Pending' })).toBe(false);
    expect(sameStatus(undefined, {})).toBe(true);
    expect(sameStatus({ phase: 'Running', replicas: 1 }, { replicas: 1, phase: 'Running' })).toBe(true);
  });
});
