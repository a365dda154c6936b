import { describe, expect, it } from 'vitest';
import { computeStatus, rfc3339, sameStatus, setCondition } from './status.ts';
import { dep, done, ms, pod, slice, slices, spec, svc, T0, T1 } from './status-fixtures.ts';
import type { Pod } from './types.ts';

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
