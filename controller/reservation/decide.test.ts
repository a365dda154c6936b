import { describe, expect, it } from 'vitest';
import type { ReservationState } from '../../schema/admission.ts';
import { decide, type ReservationRow, type ObservedCR, type ObservedPod } from './decide.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const cfg = { readyDeadlineMs: 600_000, releaseBlockedAfterMs: 60_000 };

function row(state: ReservationState, over: Partial<ReservationRow> = {}): ReservationRow {
  return {
    id: '01AAA',
    tenant: 'acme',
    state,
    stateChangedAt: T0,
    releaseBlockedSince: null,
    amounts: { cpu: 1000, memory: 2048, 'nvidia.com/gpu': 0, modelservices: 1 },
    binding: { uid: 'uid-1', everReady: false },
    change: { generation: 1, appliedGeneration: 1, settledGeneration: 1, replicas: 2, autoscale: null, fromReplicas: null },
    ...over,
  };
}
function cr(over: Partial<ObservedCR> = {}): ObservedCR {
  return { uid: 'uid-1', resourceVersion: '42', creationTimestamp: T0, deleting: false, finalizers: [], admissionId: '01AAA', tenant: 'acme', ready: false, scale: { replicas: 2, resources: { cpu: '500m', memory: '1Gi' } }, autoscale: null, ...over };
}
const pod = (name: string, terminating = true): ObservedPod => ({ name, terminating });

describe('decide: delivered / ready', () => {
  it('marks the first Ready', () => {
    expect(decide(row('delivered'), cr({ ready: true }), [], at(1000), cfg)).toEqual({ type: 'markReady' });
  });
  it('does not mark Ready twice', () => {
    const r = row('ready', { binding: { uid: 'uid-1', everReady: true } });
    expect(decide(r, cr({ ready: true }), [], at(1000), cfg)).toEqual({ type: 'none' });
  });
  it('waits until the deadline, measured from the CR creation time', () => {
    expect(decide(row('delivered'), cr(), [], at(599_000), cfg)).toEqual({ type: 'none', requeueAfterMs: 1000 });
  });
  it('deletes a never-Ready CR at the deadline with uid + resourceVersion preconditions', () => {
    expect(decide(row('delivered'), cr(), [], at(600_000), cfg)).toEqual({
      type: 'deleteCR',
      uid: 'uid-1',
      resourceVersion: '42',
      reason: 'never-ready',
      thenState: 'releasing',
    });
  });
  it.each([
    { name: "the controller's clock 20 min ahead, the CR 5 min old on the API server's: waits", local: at(25 * 60_000), server: at(300_000), want: { type: 'none', requeueAfterMs: 300_000 } },
    { name: "the controller's clock 20 min behind, the CR 10 min old on the API server's: deletes", local: at(-10 * 60_000), server: at(600_000), want: { type: 'deleteCR', uid: 'uid-1', resourceVersion: '42', reason: 'never-ready', thenState: 'releasing' } },
  ])('the deadline runs on the API server clock (creationTimestamp is its time): $name', ({ local, server, want }) => {
    expect(decide(row('delivered'), cr(), [], local, cfg, undefined, server)).toEqual(want);
  });
  it("a release blocked too long is measured on the controller's clock (the ledger's times are its own)", () => {
    const r = row('releasing', { stateChangedAt: T0 });
    const a = decide(r, null, [pod('p')], at(60_000), cfg, undefined, at(-3_600_000));
    expect(a).toMatchObject({ type: 'waitForRelease', blockedSince: at(60_000) });
  });
  it('never applies the deadline once Ready was seen, even if not Ready now', () => {
    const r = row('ready', { binding: { uid: 'uid-1', everReady: true } });
    expect(decide(r, cr({ ready: false }), [], at(10 * 600_000), cfg)).toEqual({ type: 'none' });
  });
  it('moves to releasing when the CR was deleted behind our back', () => {
    expect(decide(row('ready'), null, [pod('p')], at(0), cfg)).toMatchObject({ type: 'toReleasing' });
  });
  it('flags a same-named CR with another UID as conflict', () => {
    expect(decide(row('ready'), cr({ uid: 'uid-2' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
  });
  it('flags a same-named CR with another admission id as conflict', () => {
    expect(decide(row('delivered'), cr({ admissionId: '01BBB' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
  });
  it('flags a same-named CR with our admission id but another tenant as conflict', () => {
    expect(decide(row('delivered'), cr({ tenant: 'globex' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
    expect(decide(row('deleting'), cr({ tenant: 'globex' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
  });
  it('takes the release path when someone else deletes the CR (a stalled deletion is then surfaced)', () => {
    expect(decide(row('ready'), cr({ deleting: true }), [], at(0), cfg)).toMatchObject({ type: 'toReleasing' });
  });
});

describe('decide: scale against the charge (charged: 2 × 500m / 1Gi)', () => {
  const scaled = (replicas: number) => cr({ scale: { replicas, resources: { cpu: '500m', memory: '1Gi' } } });
  it.each(['delivered', 'ready'] as const)('reverts a scale above the charge to the charged replicas (%s)', (state) => {
    expect(decide(row(state), scaled(5), [], at(0), cfg)).toEqual({ type: 'revertScale', resourceVersion: '42', from: 5, to: 2 });
  });
  it('allows scaling down, and back up to the charge', () => {
    expect(decide(row('ready', { binding: { uid: 'uid-1', everReady: true } }), scaled(1), [], at(0), cfg)).toEqual({ type: 'none' });
    expect(decide(row('ready', { binding: { uid: 'uid-1', everReady: true } }), scaled(2), [], at(0), cfg)).toEqual({ type: 'none' });
  });
  it('checks identity before the scale: a foreign CR is a conflict, never patched', () => {
    expect(decide(row('ready'), cr({ uid: 'uid-2', scale: { replicas: 9, resources: { cpu: '1' } } }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
  });
  it('skips the check when the spec cannot be parsed', () => {
    expect(decide(row('delivered'), cr({ scale: null }), [], at(0), cfg)).toEqual({ type: 'none', requeueAfterMs: 600_000 });
  });
});

describe('decide: deleting', () => {
  it('deletes our CR, then releasing', () => {
    expect(decide(row('deleting'), cr(), [], at(0), cfg)).toMatchObject({ type: 'deleteCR', reason: 'tenant-delete', thenState: 'releasing' });
  });
  it('finds an undelivered CR by its deterministic name and admission id (binding missing)', () => {
    expect(decide(row('deleting', { binding: null }), cr({ uid: 'x' }), [], at(0), cfg)).toMatchObject({ type: 'deleteCR', uid: 'x' });
  });
  it('goes to releasing when there is no CR', () => {
    expect(decide(row('deleting', { binding: null }), null, [], at(0), cfg)).toMatchObject({ type: 'toReleasing' });
  });
  it('never deletes a CR that is not ours', () => {
    expect(decide(row('deleting'), cr({ admissionId: 'other' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
    expect(decide(row('deleting'), cr({ uid: 'uid-9' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
  });
});

describe('decide: releasing', () => {
  it('releases only when the CR and every pod are gone', () => {
    expect(decide(row('releasing'), null, [], at(0), cfg)).toEqual({ type: 'release' });
  });
  it('keeps the quota while a Terminating pod exists', () => {
    expect(decide(row('releasing'), null, [pod('p1')], at(1000), cfg)).toEqual({
      type: 'waitForRelease',
      blocker: { reason: 'PodsStillPresent', pods: ['p1'], finalizers: [] },
      blockedSince: null,
      requeueAfterMs: 2000,
    });
  });
  it('keeps the quota while our CR still exists (being deleted)', () => {
    expect(decide(row('releasing'), cr({ deleting: true }), [], at(1000), cfg)).toMatchObject({ type: 'waitForRelease', blockedSince: null });
  });
  it('sets ReleaseBlocked after the configured time, and keeps its first time', () => {
    const first = decide(row('releasing'), null, [pod('b'), pod('a')], at(60_000), cfg);
    expect(first).toMatchObject({ type: 'waitForRelease', blocker: { reason: 'PodsStillPresent', pods: ['a', 'b'] }, blockedSince: at(60_000) });
    const later = decide(row('releasing', { releaseBlockedSince: at(60_000) }), null, [pod('a')], at(90_000), cfg);
    expect(later).toMatchObject({ blockedSince: at(60_000) });
  });
  it.each([
    ['a foreign finalizer', ['example.com/hold']],
    ['ours not removed', ['modeldock.io/finalizer']],
    ['several, sorted', ['z.io/b', 'a.io/a']],
  ])('our CR stuck in deletion with no pod left (%s): ReleaseBlocked Finalizers after the configured time', (_, finalizers) => {
    const stuck = cr({ deleting: true, finalizers });
    expect(decide(row('releasing'), stuck, [], at(59_999), cfg)).toMatchObject({ type: 'waitForRelease', blockedSince: null });
    expect(decide(row('releasing'), stuck, [], at(60_000), cfg)).toEqual({
      type: 'waitForRelease',
      blocker: { reason: 'Finalizers', pods: [], finalizers: [...finalizers].sort() },
      blockedSince: at(60_000),
      requeueAfterMs: 2000,
    });
  });
  it('pods left take precedence over finalizers (foreground deletion waits for them)', () => {
    const stuck = cr({ deleting: true, finalizers: ['foregroundDeletion', 'modeldock.io/finalizer'] });
    expect(decide(row('releasing'), stuck, [pod('p1')], at(60_000), cfg)).toMatchObject({ blocker: { reason: 'PodsStillPresent', pods: ['p1'] } });
  });
  it('re-issues the delete if our CR is still there and not being deleted', () => {
    expect(decide(row('releasing'), cr(), [], at(0), cfg)).toMatchObject({ type: 'deleteCR', thenState: null });
  });
  it('a foreign object under our name proves ours is gone: release once no labelled pod is left', () => {
    expect(decide(row('releasing'), cr({ admissionId: 'other', uid: 'u9' }), [], at(0), cfg)).toEqual({ type: 'release' });
  });
  it('our admission id on another UID is a conflict', () => {
    expect(decide(row('releasing'), cr({ uid: 'uid-2' }), [], at(0), cfg)).toMatchObject({ type: 'conflict' });
  });
});

describe('decide: terminal and undelivered states', () => {
  it('leaves admitted rows to the deliverer', () => {
    expect(decide(row('admitted', { binding: null }), cr(), [], at(0), cfg)).toEqual({ type: 'none' });
  });
  it('never touches a conflict', () => {
    expect(decide(row('conflict'), cr(), [pod('p')], at(0), cfg)).toEqual({ type: 'none' });
  });
  it('deletes a CR of ours that appears after release (late write of a deposed leader), without a state change', () => {
    expect(decide(row('released'), cr(), [], at(0), cfg)).toMatchObject({ type: 'deleteCR', reason: 'orphan', thenState: null });
    expect(decide(row('released'), null, [], at(0), cfg)).toEqual({ type: 'none' });
  });
});

// Cases that pin what the mutation run (npm run mutation, docs/mutation.md) found unpinned.
describe('decide: edges pinned by the mutation run', () => {
  it('requeues for exactly the time left before the deadline (at least 1 s)', () => {
    expect(decide(row('delivered'), cr(), [], at(100_000), cfg)).toEqual({ type: 'none', requeueAfterMs: 500_000 });
    expect(decide(row('delivered'), cr(), [], at(599_500), cfg)).toEqual({ type: 'none', requeueAfterMs: 1000 });
  });
  it('past the deadline, a CR someone else is deleting is not deleted again: it takes the release path', () => {
    expect(decide(row('delivered'), cr({ deleting: true }), [], at(700_000), cfg)).toEqual({ type: 'toReleasing', reason: 'ModelService being deleted outside ModelDock' });
  });
  it('a delivered row whose binding has no UID yet adopts no conflict from the UID', () => {
    const r = row('delivered', { binding: { uid: null, everReady: false } });
    expect(decide(r, cr({ ready: true }), [], at(0), cfg)).toEqual({ type: 'markReady' });
  });
  it('tenant delete of a CR already being deleted: releasing, without a second delete', () => {
    expect(decide(row('deleting'), cr({ deleting: true }), [], at(0), cfg)).toEqual({ type: 'toReleasing', reason: 'ModelService already being deleted' });
  });
  it('names why it moves to releasing', () => {
    expect(decide(row('ready'), null, [], at(0), cfg)).toEqual({ type: 'toReleasing', reason: 'ModelService deleted outside ModelDock' });
    expect(decide(row('deleting'), null, [], at(0), cfg)).toEqual({ type: 'toReleasing', reason: 'no ModelService under our name' });
  });
  it('releasing without a binding (never delivered): our CR is deleted again, not a conflict', () => {
    expect(decide(row('releasing', { binding: null }), cr({ uid: 'x' }), [], at(0), cfg)).toEqual({
      type: 'deleteCR',
      uid: 'x',
      resourceVersion: '42',
      reason: 'tenant-delete',
      thenState: null,
    });
  });
  it('our CR still being deleted with no pod left, long after: blocked by its finalizers, not by pods', () => {
    const got = decide(row('releasing'), cr({ deleting: true }), [], at(10 * 60_000), cfg);
    expect(got).toMatchObject({ type: 'waitForRelease', blocker: { reason: 'Finalizers', pods: [] } });
  });
  it('the conflict reason names what is under our name', () => {
    expect(decide(row('ready'), cr({ admissionId: undefined, tenant: undefined }), [], at(0), cfg)).toEqual({
      type: 'conflict',
      reason: 'ModelService under our name carries admission id (none) of tenant (none)',
    });
    expect(decide(row('ready'), cr({ admissionId: '01BBB', tenant: 'globex' }), [], at(0), cfg)).toEqual({
      type: 'conflict',
      reason: 'ModelService under our name carries admission id 01BBB of tenant globex',
    });
    expect(decide(row('ready'), cr({ uid: 'uid-2' }), [], at(0), cfg)).toEqual({ type: 'conflict', reason: 'ModelService UID uid-2 differs from the bound UID uid-1' });
  });
});

describe('decide: a change of replicas', () => {
  const up = { generation: 2, appliedGeneration: 1, settledGeneration: 1, replicas: 4, autoscale: null, fromReplicas: 2 };
  const charged4 = { cpu: 2000, memory: 4096, 'nvidia.com/gpu': 0, modelservices: 1 };
  it('a delivered or ready admission applies its pending change to the CR', () => {
    for (const state of ['delivered', 'ready'] as const) {
      expect(decide(row(state, { change: up, amounts: charged4 }), cr(), [], at(0), cfg)).toMatchObject({ type: 'applyScale', to: 4, patch: true, settles: true });
    }
  });
  it('a scale above the charge is reverted first, whatever the pending change', () => {
    expect(decide(row('ready', { change: up, amounts: charged4 }), cr({ scale: { replicas: 9, resources: { cpu: '500m', memory: '1Gi' } } }), [], at(0), cfg)).toMatchObject({
      type: 'revertScale',
      to: 4,
    });
  });
  it('a delete supersedes a pending change: deleting and releasing never apply or refund it', () => {
    expect(decide(row('deleting', { change: up }), cr(), [], at(0), cfg)).toMatchObject({ type: 'deleteCR', reason: 'tenant-delete' });
    expect(decide(row('releasing', { change: { ...up, appliedGeneration: 2, replicas: 1, fromReplicas: 2 } }), null, [], at(0), cfg)).toEqual({ type: 'release' });
  });
  it('a decrease is refunded only on a live read of the Deployment and the pods', () => {
    const down = { generation: 2, appliedGeneration: 2, settledGeneration: 1, replicas: 1, autoscale: null, fromReplicas: 2 };
    const onCr = cr({ scale: { replicas: 1, resources: { cpu: '500m', memory: '1Gi' } } });
    expect(decide(row('ready', { change: down }), onCr, [], at(0), cfg)).toMatchObject({ type: 'awaitScaleDown' });
    const d = { generation: 2, observedGeneration: 2, specReplicas: 1, statusReplicas: 1 };
    expect(decide(row('ready', { change: down }), onCr, [pod('a', false), pod('b')], at(0), cfg, d)).toMatchObject({ type: 'awaitScaleDown', surplusPods: ['a', 'b'] });
    expect(decide(row('ready', { change: down }), onCr, [pod('a', false)], at(0), cfg, d)).toEqual({ type: 'refund', generation: 2, from: 2, to: 1 });
  });
});
