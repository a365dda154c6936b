import { describe, expect, it } from 'vitest';
import type { ReservationState } from '../../schema/admission.ts';
import { refusal } from './resolve.ts';
import type { ReservationRecord } from '../../controller/reservation/record.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
function rec(state: ReservationState, uid: string | null = 'uid-1'): ReservationRecord {
  return {
    id: '01AAA',
    tenant: 'acme',
    state,
    cluster: 'default',
    room: null,
    stateChangedAt: T0,
    releaseBlockedSince: null,
    releaseBlockedReason: null,
    releaseBlockedPods: null,
    releaseBlockedFinalizers: null,
    amounts: { cpu: 500, memory: 512, 'nvidia.com/gpu': 0, modelservices: 1 },
    createdAt: T0,
    requestId: 'r',
    spec: {},
    lastReconciledAt: null,
    change: { generation: 1, appliedGeneration: 1, settledGeneration: 1, replicas: 1, autoscale: null, fromReplicas: null },
    binding: uid === null ? null : { uid, everReady: true, namespace: 'ns', crName: 'md-01aaa', firstReadyAt: null, scheduledAt: null, startedAt: null, lastFailure: null },
  };
}
const gone = { cr: null, pods: [] };

describe('resolve: refusal', () => {
  it('allows a conflict whose CR and pods are gone', () => {
    expect(refusal(rec('conflict'), gone)).toBeUndefined();
  });
  it('allows it while a FOREIGN object holds our name (another UID)', () => {
    expect(refusal(rec('conflict'), { cr: { ref: 'ns/md-01aaa', uid: 'uid-9' }, pods: [] })).toBeUndefined();
    expect(refusal(rec('conflict', null), { cr: { ref: 'ns/md-01aaa', uid: 'uid-9' }, pods: [] })).toBeUndefined();
  });
  it('refuses while the CR with the bound UID exists', () => {
    expect(refusal(rec('conflict'), { cr: { ref: 'ns/md-01aaa', uid: 'uid-1' }, pods: [] })).toMatch(/bound UID uid-1 still exists/);
  });
  it('refuses while any pod of the admission exists', () => {
    expect(refusal(rec('conflict'), { cr: null, pods: ['ns/p-2', 'ns/p-1'] })).toMatch(/2 pod\(s\) of the admission still exist: ns\/p-1, ns\/p-2/);
  });
  it.each(['admitted', 'delivered', 'ready', 'deleting', 'releasing', 'released'] as const)('refuses a reservation in %s', (state) => {
    expect(refusal(rec(state), gone)).toMatch(/not in conflict/);
  });
  it('refuses an unknown admission', () => {
    expect(refusal(undefined, gone)).toBe('no such admission');
  });
});
