import { describe, expect, it } from 'vitest';
import { FAILURE_MESSAGE_MAX_CHARS, FAILURE_REASONS as SHOWN_REASONS } from '../../schema/tenant-errors.ts';
import { computeStatus, deploymentFailure, FAILURE_REASONS, lastFailure, podFailure } from './status.ts';
import { crashLoop, dep, done, ms, pod, pullBackOff, slices, spec, svc, T0, T1 } from './status-fixtures.ts';
import type { Pod } from './types.ts';

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

// Cases that pin what the mutation run (npm run mutation, docs/mutation.md) found unpinned.
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

// A pod's messages are the tenant's (a termination message) or a registry's (an image pull error).
describe('podFailure: what the tenant and the registry control is shown printable and bounded', () => {
  const crashWith = (message: string) =>
    pod('p', [{ name: 'model', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', message } } }]);

  it('a termination message of 4 KiB of " with terminal controls: no control character, at most FAILURE_MESSAGE_MAX_CHARS characters', () => {
    const f = podFailure([crashWith(`\u001b]0;owned\u0007\u009b2J${'"'.repeat(4096)}`)]);
    expect(f?.reason).toBe('CrashLoopBackOff');
    expect(f?.message).toMatch(/^\]0;owned2J"+$/);
    expect(Array.from(f!.message)).toHaveLength(FAILURE_MESSAGE_MAX_CHARS);
  });

  it('a termination message of control characters only is no message: the back-off message is shown', () => {
    expect(podFailure([crashWith('\u0000\u0007\u001b\u009b\n')])?.message).toBe('back-off 10s');
  });

  it('a registry error and a scheduler message are made printable too', () => {
    const pull = pod('p', [{ name: 'model', state: { waiting: { reason: 'ErrImagePull', message: 'pull access denied\u001b[8m hidden\u001b[0m\r\nserver: \u202egnp.x' } } }]);
    expect(podFailure([pull])?.message).toBe('pull access denied[8m hidden[0m  server: gnp.x');
    const pending: Pod = { metadata: { name: 'a' }, status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes\u0007 are available' }] } };
    expect(podFailure([pending])?.message).toBe('0/2 nodes are available');
  });

  it('a termination reason other than OOMKilled is Error: the reason is always one of FAILURE_REASONS', () => {
    for (const reason of ['ContainerCannotRun', 'Evil\u001b[31m', undefined]) {
      const f = podFailure([pod('p', [{ name: 'model', state: { terminated: { exitCode: 2, reason } } }])]);
      expect(f?.reason).toBe('Error');
      expect(SHOWN_REASONS).toContain(f?.reason);
    }
  });

  it('the Degraded conditions carry the printable message', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: dep({ replicas: 2, updatedReplicas: 2 }), service: svc, endpointSlices: slices, pods: [crashWith('bad\u001b[2J')], now: T0 });
    expect(s.conditions?.map((c) => c.message)).toEqual(['bad[2J', 'bad[2J']);
  });
});

describe('deploymentFailure: pods the cluster refuses to create', () => {
  const refused = (message: string, status = 'True') =>
    dep({ replicas: 1, updatedReplicas: 1, conditions: [{ type: 'ReplicaFailure', status, reason: 'FailedCreate', message }] });
  const QUOTA =
    'pods "md-01abc-7d9f-x2" is forbidden: exceeded quota: modeldock-tenant-quota, requested: limits.cpu=500m,requests.cpu=500m, used: limits.cpu=4,requests.cpu=4, limited: limits.cpu=4,requests.cpu=4';

  it("the tenant namespace's ResourceQuota refusing a pod is QuotaExceeded, with what was requested, used and limited", () => {
    expect(deploymentFailure(refused(QUOTA))).toEqual({
      reason: 'QuotaExceeded',
      message: "the tenant namespace's ResourceQuota refused a pod: exceeded quota: modeldock-tenant-quota, requested: limits.cpu=500m,requests.cpu=500m, used: limits.cpu=4,requests.cpu=4, limited: limits.cpu=4,requests.cpu=4",
    });
  });

  it('another refusal is FailedCreate with the API server\'s words (printable); none when the condition is not True or absent', () => {
    expect(deploymentFailure(refused('pods "x" is forbidden: violates PodSecurity\u001b[2J'))).toEqual({ reason: 'FailedCreate', message: 'pods "x" is forbidden: violates PodSecurity[2J' });
    expect(deploymentFailure(refused(''))).toEqual({ reason: 'FailedCreate', message: 'FailedCreate' });
    expect(deploymentFailure(refused(QUOTA, 'False'))).toBeUndefined();
    expect(deploymentFailure(done)).toBeUndefined();
    expect(deploymentFailure(undefined)).toBeUndefined();
  });

  it('a refused pod makes the ModelService Degraded with the reason, not Progressing forever; a failing pod is reported first', () => {
    const s = computeStatus({ ms: ms(), spec, deployment: refused(QUOTA), service: svc, endpointSlices: [], pods: [], now: T0 });
    expect(s.phase).toBe('Degraded');
    expect(s.lastFailure?.reason).toBe('QuotaExceeded');
    expect(s.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('QuotaExceeded');
    expect(SHOWN_REASONS).toContain('QuotaExceeded');
    expect(SHOWN_REASONS).toContain('FailedCreate');
    const both = computeStatus({ ms: ms(), spec, deployment: refused(QUOTA), service: svc, endpointSlices: [], pods: [crashLoop], now: T0 });
    expect(both.lastFailure?.reason).toBe('CrashLoopBackOff');
  });
});
