import { describe, expect, it } from 'vitest';
import { awaitsScaleDown, decideScale, type ObservedDeployment, type ScaleProgress } from './scale.ts';

const settled: ScaleProgress = { generation: 1, appliedGeneration: 1, settledGeneration: 1, replicas: 2, autoscale: null, fromReplicas: null };
const up: ScaleProgress = { generation: 2, appliedGeneration: 1, settledGeneration: 1, replicas: 4, autoscale: null, fromReplicas: 2 };
const down: ScaleProgress = { generation: 2, appliedGeneration: 1, settledGeneration: 1, replicas: 1, autoscale: null, fromReplicas: 3 };
const downApplied: ScaleProgress = { ...down, appliedGeneration: 2 };
const cr = (replicas: number | null, autoscale: string | null = null) => ({ resourceVersion: '7', replicas, autoscale });
const dep = (over: Partial<ObservedDeployment> = {}): ObservedDeployment => ({ generation: 3, observedGeneration: 3, specReplicas: 1, statusReplicas: 1, ...over });
const pods = (...names: string[]) => names.map((name) => ({ name }));

describe('decideScale', () => {
  it('has nothing to do once the latest generation is settled', () => {
    expect(decideScale(settled, cr(2), undefined)).toBeUndefined();
    expect(decideScale({ ...up, appliedGeneration: 2, settledGeneration: 2 }, cr(1), undefined)).toBeUndefined();
  });
  it('patches an increase onto the CR, guarded by the resourceVersion read, and settles it with the record', () => {
    expect(decideScale(up, cr(2), undefined)).toEqual({ type: 'applyScale', generation: 2, to: 4, autoscale: null, resourceVersion: '7', patch: true, settles: true });
  });
  it('records a change the CR already carries without patching it (a crash after the patch, or a delivery after the PATCH)', () => {
    expect(decideScale(up, cr(4), undefined)).toEqual({ type: 'applyScale', generation: 2, to: 4, autoscale: null, resourceVersion: '7', patch: false, settles: true });
    expect(decideScale(down, cr(1), undefined)).toMatchObject({ type: 'applyScale', patch: false, settles: false });
  });
  it('patches a change of the autoscale spec onto the CR (set, changed or cleared), even at the same replicas', () => {
    const spec = '{"maxReplicas":4,"minReplicas":1}';
    const setting: ScaleProgress = { generation: 2, appliedGeneration: 1, settledGeneration: 1, replicas: 2, autoscale: spec, fromReplicas: 2 };
    expect(decideScale(setting, cr(2), undefined)).toEqual({ type: 'applyScale', generation: 2, to: 2, autoscale: spec, resourceVersion: '7', patch: true, settles: true });
    expect(decideScale(setting, cr(2, spec), undefined)).toMatchObject({ type: 'applyScale', patch: false, settles: true });
    expect(decideScale({ ...setting, autoscale: null }, cr(2, spec), undefined)).toMatchObject({ type: 'applyScale', autoscale: null, patch: true });
  });
  it('a decrease of an autoscaled admission whose CR carries its spec waits for its pods, then is refunded (no endless re-patch)', () => {
    const spec = '{"maxReplicas":4,"minReplicas":1}';
    const down: ScaleProgress = { generation: 3, appliedGeneration: 3, settledGeneration: 2, replicas: 1, autoscale: spec, fromReplicas: 2 };
    expect(decideScale(down, cr(1, spec), { deployment: dep(), pods: pods('a', 'b') })).toMatchObject({ type: 'awaitScaleDown' });
    expect(decideScale(down, cr(1, spec), { deployment: dep(), pods: pods('a') })).toEqual({ type: 'refund', generation: 3, from: 2, to: 1 });
  });
  it('applies a decrease without settling it: its refund waits', () => {
    expect(decideScale(down, cr(3), undefined)).toMatchObject({ type: 'applyScale', to: 1, patch: true, settles: false });
    expect(awaitsScaleDown(down)).toBe(false);
    expect(awaitsScaleDown(downApplied)).toBe(true);
    expect(awaitsScaleDown(settled)).toBe(false);
  });
  it('patches the CR again when it moved away from an applied, unsettled decrease', () => {
    expect(decideScale(downApplied, cr(3), { deployment: dep(), pods: [] })).toMatchObject({ type: 'applyScale', to: 1, patch: true, settles: false });
  });
  it('never refunds on the cache alone', () => {
    expect(decideScale(downApplied, cr(1), undefined)).toEqual({ type: 'awaitScaleDown', generation: 2, surplusPods: [], requeueAfterMs: 2000 });
  });
  it('waits while more pods than the new replicas exist, Terminating ones included, naming them', () => {
    expect(decideScale(downApplied, cr(1), { deployment: dep(), pods: pods('p-b', 'p-a') })).toEqual({
      type: 'awaitScaleDown',
      generation: 2,
      surplusPods: ['p-a', 'p-b'],
      requeueAfterMs: 2000,
    });
  });
  it('waits until the Deployment asks for, has observed, and counts no more than the new replicas', () => {
    const live = (d: ObservedDeployment | null) => decideScale(downApplied, cr(1), { deployment: d, pods: pods('p-a') });
    expect(live(null)).toEqual({ type: 'awaitScaleDown', generation: 2, surplusPods: [], requeueAfterMs: 2000 });
    expect(live(dep({ specReplicas: 3 }))).toEqual({ type: 'awaitScaleDown', generation: 2, surplusPods: [], requeueAfterMs: 2000 });
    expect(live(dep({ observedGeneration: 2 }))).toMatchObject({ type: 'awaitScaleDown' });
    expect(live(dep({ statusReplicas: 2 }))).toMatchObject({ type: 'awaitScaleDown' });
    expect(live(dep())).toEqual({ type: 'refund', generation: 2, from: 3, to: 1 });
  });
  it('refunds a decrease to 0 once no pod is left', () => {
    const toZero: ScaleProgress = { generation: 3, appliedGeneration: 3, settledGeneration: 2, replicas: 0, autoscale: null, fromReplicas: 2 };
    expect(decideScale(toZero, cr(0), { deployment: dep({ specReplicas: 0, statusReplicas: 0 }), pods: pods('x') })).toMatchObject({ type: 'awaitScaleDown' });
    expect(decideScale(toZero, cr(0), { deployment: dep({ specReplicas: 0, statusReplicas: 0 }), pods: [] })).toEqual({ type: 'refund', generation: 3, from: 2, to: 0 });
  });
});
