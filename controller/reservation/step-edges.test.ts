// The edges of one step that the main suites pass by: which reads a state trusts, what is recorded
// only for our own CR, the event and the condition texts, and when a blocker counts as new.
import { describe, expect, it } from 'vitest';
import { stepOf } from '../../test/support/reconcile-harness.ts';
import { ago, BOUND_UID, CR_NAME, modelService, NAMESPACE } from '../../test/support/reservation-fixtures.ts';

const READY = { state: 'ready', binding: { everReady: true } } as const;

describe('step: what each state reads', () => {
  it("released: the informer cache is never trusted (it may lag a deposed leader's late create): a live read finds the orphan and deletes it", async () => {
    const { ops } = await stepOf({ state: 'released' }, { cached: null, modelService: modelService() });
    expect(ops).toEqual(['readModelService', 'deleteModelService']);
  });

  it('releasing: the informer cache is never trusted; pods are read live', async () => {
    const { ops, h } = await stepOf({ state: 'releasing' }, { cached: null, modelService: null, pods: [] });
    expect(ops).toEqual(['readModelService', 'listPods']);
    expect(await h.count('released')).toBe(1);
  });
});

describe('step: startup progress is copied only from our own CR', () => {
  it.each([
    { name: 'a CR of another admission', cr: modelService({ admissionId: 'OTHER', scheduledAt: ago(10_000) }) },
    { name: 'a CR under our name with another UID', cr: modelService({ uid: 'uid-other', scheduledAt: ago(10_000) }) },
  ])('$name: no progress recorded', async ({ cr }) => {
    const { h } = await stepOf({ state: 'delivered' }, { cached: cr, modelService: cr });
    expect(h.writes().filter((w) => w.sql.includes('b.scheduled_at'))).toEqual([]);
  });

  it('no binding yet: no progress recorded', async () => {
    const cr = modelService({ scheduledAt: ago(10_000) });
    const { h } = await stepOf({ state: 'delivered', binding: null }, { cached: cr, modelService: cr });
    expect(h.writes().filter((w) => w.sql.includes('b.scheduled_at'))).toEqual([]);
  });
});

describe('step: replicas and deletion', () => {
  it('a change of replicas the CR already carries: nothing patched, the generation recorded applied', async () => {
    const change = { generation: 2, applied: 1, settled: 1, fromReplicas: 1 };
    const { h, result } = await stepOf({ ...READY, change }, { modelService: modelService({ replicas: 2 }) });
    expect(result).toEqual({ requeue: true });
    expect(h.calls.map((c) => c.op)).not.toContain('scaleModelService');
    expect(h.writes().map((w) => w.sql)).toEqual([expect.stringMatching(/SET r\.applied_generation = \?, r\.settled_generation = \?/)]);
  });

  it('never Ready: the NeverReady event says why, on the CR', async () => {
    const { h } = await stepOf({ state: 'delivered' }, { modelService: modelService({ createdAt: ago(700_000) }) });
    expect(h.events).toEqual([{ type: 'Warning', reason: 'NeverReady', name: CR_NAME, note: 'not Ready within 600000 ms of creation: deleting, quota released once its pods are gone' }]);
  });

  it('a tenant delete: no NeverReady event, the delete guarded by the uid only', async () => {
    const { h } = await stepOf({ state: 'deleting' }, { modelService: modelService() });
    expect(h.events).toEqual([]);
    expect(h.calls.find((c) => c.op === 'deleteModelService')?.args).toEqual([NAMESPACE, CR_NAME, { uid: BOUND_UID }]);
  });

  it('a tenant delete whose CR is already gone: releasing with the tenant-delete text', async () => {
    const { h } = await stepOf({ state: 'deleting' }, { modelService: null, pods: [] });
    expect(h.writes().map((w) => w.args[4])).toEqual(['DeletedByTenant: deleted by the tenant']);
  });
});

describe('step: a release blocked', () => {
  const blocked = { state: 'releasing', stateChangedAt: ago(120_000) } as const;

  it('a CR in deletion without any finalizer left (not yet gone): blocked by Finalizers, "(none)" in the condition', async () => {
    const { h } = await stepOf(blocked, { modelService: modelService({ deleting: true, finalizers: [] }), pods: [] });
    expect(h.calls.find((c) => c.op === 'setCondition')?.args[2]).toMatchObject({ reason: 'Finalizers', message: 'quota kept: no pod left, but the ModelService stays in deletion; finalizers: (none)' });
    expect(h.writes().map((w) => w.args.slice(2, 5))).toEqual([['Finalizers', '[]', '[]']]);
  });

  it('other finalizers than recorded: recorded again', async () => {
    const since = ago(30_000);
    const { h } = await stepOf(
      { ...blocked, releaseBlocked: { since, reason: 'Finalizers', pods: [], finalizers: ['example.com/a'] } },
      { modelService: modelService({ deleting: true, finalizers: ['example.com/b', 'example.com/c'] }), pods: [] },
    );
    expect(h.writes().map((w) => w.args.slice(1, 5))).toEqual([[since, 'Finalizers', '[]', '["example.com/b","example.com/c"]']]);
    expect(h.calls.find((c) => c.op === 'setCondition')?.args[2]).toMatchObject({ message: 'quota kept: no pod left, but the ModelService stays in deletion; finalizers: example.com/b, example.com/c' });
    expect(await h.count('releaseBlocked')).toBe(0); // the same reason: not counted again
  });

  it('the condition message is cut to 1,000 characters however many pods block', async () => {
    const pods = Array.from({ length: 60 }, (_, i) => ({ name: `pod-with-a-rather-long-name-${String(i).padStart(3, '0')}`, terminating: true }));
    const { h } = await stepOf(blocked, { modelService: null, pods });
    const message = (h.calls.find((c) => c.op === 'setCondition')?.args[2] as { message: string }).message;
    expect(message).toHaveLength(1000);
    expect(message.startsWith('quota kept: 60 pod(s) still exist: pod-with-a-rather-long-name-000, ')).toBe(true);
  });
});
