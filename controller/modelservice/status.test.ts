import { describe, expect, it } from 'vitest';
import type { ModelService, ModelServiceStatus } from '../../schema/model-service.ts';
import { computeStatus, podFailure, rfc3339, sameStatus, setCondition } from './status.ts';
import type { Deployment, Pod } from './types.ts';

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

describe('computeStatus phase', () => {
  it.each([
    ['no Deployment yet → Pending', { deployment: undefined }, 'Pending'],
    ['Deployment not observed by its controller → Pending', { deployment: { metadata: { name: 'a', generation: 1 }, spec: { replicas: 2 } } }, 'Pending'],
    ['rolling out → Progressing', { deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }) }, 'Progressing'],
    ['latest generation not observed → Progressing', { deployment: { ...done, metadata: { name: 'a', generation: 2 } } }, 'Progressing'],
    ['old replicas still around → Progressing', { deployment: dep({ replicas: 3, updatedReplicas: 2, availableReplicas: 2 }) }, 'Progressing'],
    ['Deployment scaled by hand (spec differs) → Progressing', { deployment: dep({ replicas: 0, updatedReplicas: 0, availableReplicas: 0 }, 1, 0) }, 'Progressing'],
    ['updated = available = desired → Running', { deployment: done }, 'Running'],
    ['a pod in ImagePullBackOff while not converged → Degraded', { deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 0 }), pods: [pullBackOff] }, 'Degraded'],
    ['a foreign child → Degraded', { deployment: done, problem: { reason: 'ChildConflict', message: 'x' } }, 'Degraded'],
  ])('%s', (_n, o, phase) => {
    const s = computeStatus({ ms: ms(), spec, service: svc, pods: [], now: T0, ...o } as Parameters<typeof computeStatus>[0]);
    expect(s.phase).toBe(phase);
    expect(s.observedGeneration).toBe(1);
  });

  it('deletionTimestamp → Terminating', () => {
    expect(computeStatus({ ms: ms({ deleting: true }), spec, deployment: done, service: svc, pods: [], now: T0 }).phase).toBe('Terminating');
  });
});

describe('computeStatus fields', () => {
  it('fills counts, selector, endpoint, observedGeneration and Ready/Progressing conditions', () => {
    const s = computeStatus({ ms: ms({ generation: 3 }), spec, deployment: done, service: svc, pods: [], now: T0 });
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
    const first = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 1 }), service: svc, pods: [], now: T0 });
    const again = computeStatus({ ms: ms({ status: first }), spec, deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 0 }), service: svc, pods: [], now: T1 });
    expect(again.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(again.conditions?.find((c) => c.type === 'Ready')?.message).toBe('0/2 replicas available');
    const ready = computeStatus({ ms: ms({ status: again }), spec, deployment: done, service: svc, pods: [], now: T1 });
    expect(ready.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:01:00Z' });
  });

  it('an identical observation gives an identical status (so it is not written)', () => {
    const a = computeStatus({ ms: ms(), spec, deployment: done, service: svc, pods: [], now: T0 });
    const b = computeStatus({ ms: ms({ status: a }), spec, deployment: done, service: svc, pods: [], now: T1 });
    expect(sameStatus(a, b)).toBe(true);
  });

  it('timeline: admittedAt from the annotation, createdAt, scheduledAt, startedAt, readyAt; never moved back', () => {
    const p = pod('p', [{ name: 'model', ready: true, state: { running: { startedAt: '2026-01-01T00:00:05Z' } } }], {
      startTime: '2026-01-01T00:00:03Z',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:02Z' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:07Z' },
      ],
    });
    const s = computeStatus({ ms: ms({ annotations: { 'modeldock.io/admitted-at': '2025-12-31T23:58:00.123Z' } }), spec, deployment: done, service: svc, pods: [p], now: T0 });
    expect(s).toMatchObject({
      admittedAt: '2025-12-31T23:58:00Z',
      createdAt: '2025-12-31T23:59:00Z',
      scheduledAt: '2026-01-01T00:00:02Z',
      startedAt: '2026-01-01T00:00:05Z',
      readyAt: '2026-01-01T00:00:07Z',
    });
    const later = pod('q', [{ name: 'model', state: { running: { startedAt: '2026-01-01T00:00:01Z' } } }]);
    const s2 = computeStatus({ ms: ms({ status: s }), spec, deployment: done, service: svc, pods: [later], now: T1 });
    expect(s2.startedAt).toBe('2026-01-01T00:00:05Z');
    expect(s2.readyAt).toBe('2026-01-01T00:00:07Z');
  });

  it('no readyAt before a replica is available', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2, availableReplicas: 0 }), service: svc, pods: [], now: T0 });
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

  it('lastFailure stays after the failure cleared (the most recent failure seen)', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2 }), service: svc, pods: [crashLoop], now: T0 });
    expect(s.lastFailure).toMatchObject({ reason: 'CrashLoopBackOff', exitCode: 1 });
    const s2 = computeStatus({ ms: ms({ status: s }), spec, deployment: done, service: svc, pods: [], now: T1 });
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
