import { describe, expect, it } from 'vitest';
import { stepOf } from '../../test/support/reconcile-harness.ts';
import { ago, BOUND_UID, CR_NAME, EPOCH, KEY, modelService, NAMESPACE, NOW } from '../../test/support/reservation-fixtures.ts';

describe('step: deletion', () => {
  it('never Ready within the deadline: a NeverReady event, delete guarded by uid and resourceVersion, then releasing', async () => {
    const { h, result } = await stepOf({ state: 'delivered' }, { modelService: modelService({ createdAt: ago(700_000) }) });
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.events.map((e) => e.reason)).toEqual(['NeverReady']);
    expect(h.calls.find((c) => c.op === 'deleteModelService')?.args).toEqual([NAMESPACE, CR_NAME, { uid: BOUND_UID, resourceVersion: 'rv-1' }]);
    expect(h.writes().map((w) => w.args)).toEqual([[EPOCH, 'releasing', NOW, NOW, 'NeverReady: never Ready within 600000 ms of its creation: deleted, its quota released once its pods are gone', KEY.tenant, KEY.id, ['delivered']]]);
  });

  it('a delete refused by its precondition (the CR changed after the decision): no state change, re-decided', async () => {
    const { h, result } = await stepOf({ state: 'delivered' }, { modelService: modelService({ createdAt: ago(700_000) }), delete: 'precondition-failed' });
    expect(result).toEqual({ requeue: true });
    expect(h.writes()).toEqual([]);
  });

  it('a tenant delete: the CR deleted with its uid (pods read live), then releasing', async () => {
    const { h, result, ops } = await stepOf({ state: 'deleting' }, { modelService: modelService() });
    expect(ops).toEqual(['readModelService', 'listPods', 'deleteModelService']);
    expect(h.calls[2]?.args).toEqual([NAMESPACE, CR_NAME, { uid: BOUND_UID }]);
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.writes().map((w) => w.args)).toEqual([[EPOCH, 'releasing', NOW, NOW, 'DeletedByTenant: deleted by the tenant', KEY.tenant, KEY.id, ['deleting']]]);
  });

  it('released, and a CR of ours appears (a deposed leader wrote it late): deleted, no state change', async () => {
    const { h, result } = await stepOf({ state: 'released' }, { modelService: modelService() });
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.calls.find((c) => c.op === 'deleteModelService')?.args).toEqual([NAMESPACE, CR_NAME, { uid: BOUND_UID }]);
    expect(h.writes()).toEqual([]);
  });
});

describe('step: release', () => {
  const pods = [
    { name: 'p-b', terminating: true },
    { name: 'p-a', terminating: false },
  ];

  it('nothing of it left: released, its release movement and usage down by its amounts, in one committed transaction', async () => {
    const { h, result } = await stepOf({ state: 'releasing' }, { modelService: null, pods: [] });
    expect(result).toEqual({});
    const writes = h.writes();
    expect(writes.map((w) => w.sql)).toEqual([
      expect.stringMatching(/^UPDATE reservation r JOIN tenant_fence f .* SET r\.state = 'released'.* AND r\.state = 'releasing'/),
      expect.stringMatching(/^INSERT INTO quota_movement /),
      expect.stringMatching(/^UPDATE tenant_quota SET /),
    ]);
    expect(writes[0]?.args).toEqual([EPOCH, NOW, NOW, KEY.tenant, KEY.id]);
    expect(writes[1]?.args).toEqual([KEY.id, 1, 'release', KEY.tenant, 1000, 1024, 0, 1, NOW, null]);
    const release = h.statements.filter((s) => !/MAX\(queued\)|FROM cluster/.test(s.sql));
    expect(new Set(release.map((s) => s.tx)).size).toBe(1);
    expect(h.ends).toEqual(['commit']);
    expect(await h.count('released')).toBe(1);
    // Then the queue is looked at: no cluster registered, so the tenant's own (nothing queued here: one read, no transaction).
    expect(h.statements.slice(-2).map((s) => s.sql)).toEqual([
      expect.stringMatching(/^SELECT name FROM cluster LIMIT 1/),
      expect.stringMatching(/^SELECT MAX\(queued\) AS queued FROM tenant_quota WHERE tenant = \?/),
    ]);
  });

  it('nothing to release (released meanwhile, or fenced): rolled back, not counted', async () => {
    const { h, result } = await stepOf({ state: 'releasing' }, { modelService: null, pods: [], affected: () => 0 });
    expect(result).toEqual({});
    expect(h.writes()).toHaveLength(1);
    expect(h.ends).toEqual(['rollback']);
    expect(await h.count('released')).toBe(0);
  });

  it('pods still exist past the blocked-after time: ReleaseBlocked on the CR, then in the ledger, counted by reason', async () => {
    const { h, result } = await stepOf({ state: 'releasing', stateChangedAt: ago(120_000) }, { modelService: null, pods });
    expect(result).toEqual({ requeueAfterMs: 2_000 });
    expect(h.calls.find((c) => c.op === 'setCondition')?.args).toEqual([
      NAMESPACE,
      CR_NAME,
      { type: 'ReleaseBlocked', status: 'True', reason: 'PodsStillPresent', message: 'quota kept: 2 pod(s) still exist: p-a, p-b', lastTransitionTime: NOW.toISOString() },
    ]);
    expect(h.writes()).toEqual([
      {
        sql: expect.stringMatching(/^UPDATE reservation r JOIN tenant_fence f .* SET r\.release_blocked_since = COALESCE\(r\.release_blocked_since, \?\).* AND r\.state = 'releasing'/),
        args: [EPOCH, NOW, 'PodsStillPresent', '["p-a","p-b"]', '[]', NOW, KEY.tenant, KEY.id],
        tx: null,
      },
    ]);
    expect(await h.count('releaseBlocked', { reason: 'PodsStillPresent' })).toBe(1);
    expect(h.writes()).toHaveLength(1);
  });

  it('no pod left, but our CR stays in deletion: blocked by its finalizers, named in the condition', async () => {
    const { h } = await stepOf({ state: 'releasing', stateChangedAt: ago(120_000) }, { modelService: modelService({ deleting: true, finalizers: ['example.com/keep'] }), pods: [] });
    const condition = h.calls.find((c) => c.op === 'setCondition')?.args[2];
    expect(condition).toMatchObject({ reason: 'Finalizers', message: 'quota kept: no pod left, but the ModelService stays in deletion; finalizers: example.com/keep' });
    expect(await h.count('releaseBlocked', { reason: 'Finalizers' })).toBe(1);
  });

  it('the same blocker already recorded: nothing written again', async () => {
    const since = ago(30_000);
    const { h, result } = await stepOf(
      { state: 'releasing', stateChangedAt: ago(120_000), releaseBlocked: { since, reason: 'PodsStillPresent', pods: ['p-a', 'p-b'], finalizers: [] } },
      { modelService: null, pods },
    );
    expect(result).toEqual({ requeueAfterMs: 2_000 });
    expect(h.calls.map((c) => c.op)).not.toContain('setCondition');
    expect(h.writes()).toEqual([]);
  });

  it('other pods, same reason: recorded again from the first time blocked, not counted again', async () => {
    const since = ago(30_000);
    const { h } = await stepOf(
      { state: 'releasing', stateChangedAt: ago(120_000), releaseBlocked: { since, reason: 'PodsStillPresent', pods: ['p-old'], finalizers: [] } },
      { modelService: null, pods },
    );
    expect(h.writes().map((w) => w.args.slice(1, 4))).toEqual([[since, 'PodsStillPresent', '["p-a","p-b"]']]);
    expect(await h.count('releaseBlocked')).toBe(0);
  });

  it('blocked for less than the blocked-after time: nothing surfaced yet', async () => {
    const { h, result } = await stepOf({ state: 'releasing', stateChangedAt: ago(10_000) }, { modelService: null, pods });
    expect(result).toEqual({ requeueAfterMs: 2_000 });
    expect(h.writes()).toEqual([]);
    expect(h.calls.map((c) => c.op)).toEqual(['readModelService', 'listPods']);
  });
});
