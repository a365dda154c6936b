import { describe, expect, it } from 'vitest';
import type { ModelServiceStatus } from '../../schema/model-service.ts';
import { computeStatus, readyEndpoints, rolloutComplete } from './status.ts';
import { dep, done, ms, pullBackOff, slice, slices, spec, svc, T0 } from './status-fixtures.ts';
import type { Deployment, EndpointSlice } from './types.ts';

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
