import { describe, expect, it } from 'vitest';
import { TerminalError } from '../runtime/errors.ts';
import { stepOf } from '../../test/support/reconcile-harness.ts';
import { ago, CHARGED, CR_NAME, EPOCH, KEY, modelService, NAMESPACE, NOW } from '../../test/support/reservation-fixtures.ts';

const logged = (h: { logs: Array<Record<string, unknown>> }) => h.logs.map((l) => l.msg);
/** Three replicas' worth of SPEC's per-replica resources: a decrease to 2 not refunded yet. */
const CHARGED_3 = { ...CHARGED, cpu: 1500, memory: 1536 };
const DECREASE = { generation: 2, applied: 2, settled: 1, fromReplicas: 3 };
const SETTLED_DEPLOYMENT = { generation: 3, observedGeneration: 3, specReplicas: 2, statusReplicas: 2 };

describe('step: states the controller leaves alone', () => {
  it.each(['admitted', 'conflict'] as const)('%s: nothing read, nothing written', async (state) => {
    const { h, result, ops } = await stepOf({ state });
    expect(result).toEqual({});
    expect(ops).toEqual([]);
    expect(h.statements).toEqual([]);
  });
});

describe('step: decided on the informer cache', () => {
  it('first Ready: delivered → ready and ever_ready in one committed transaction, without a live read', async () => {
    const { h, result, ops } = await stepOf({ state: 'delivered' }, { cached: modelService({ ready: true }) });
    expect(result).toEqual({});
    expect(ops).toEqual([]);
    const writes = h.writes();
    expect(writes.map((w) => w.sql)).toEqual([
      expect.stringMatching(/^UPDATE reservation r JOIN tenant_fence f .* SET r\.state = 'ready'.* AND r\.state = 'delivered'/),
      expect.stringMatching(/^UPDATE binding b JOIN tenant_fence f .* SET b\.ever_ready = 1/),
    ]);
    expect(writes[0]?.args).toEqual([EPOCH, NOW, NOW, KEY.tenant, KEY.id]);
    expect(writes[0]?.tx).not.toBeNull();
    expect(writes[1]?.tx).toBe(writes[0]?.tx);
    expect(h.ends).toEqual(['commit']);
    expect(logged(h)).toContain('first Ready recorded');
  });

  it('first Ready whose binding update matches nothing (the fence moved between the two): rolled back, nothing recorded', async () => {
    const { h, result } = await stepOf({ state: 'delivered' }, { cached: modelService({ ready: true }), affected: (sql) => (sql.startsWith('UPDATE binding') ? 0 : 1) });
    expect(result).toEqual({});
    expect(h.ends).toEqual(['rollback']);
    expect(logged(h)).not.toContain('first Ready recorded');
  });

  it('not Ready yet within the deadline: progress the CR status observed is copied to the binding; look again at the deadline', async () => {
    const scheduledAt = ago(30_000);
    const { h, result, ops } = await stepOf({ state: 'delivered' }, { cached: modelService({ scheduledAt }) });
    expect(result).toEqual({ requeueAfterMs: 600_000 - 60_000 });
    expect(ops).toEqual([]);
    expect(h.writes()).toEqual([
      { sql: expect.stringMatching(/^UPDATE binding b JOIN tenant_fence f .* SET b\.scheduled_at = COALESCE\(b\.scheduled_at, \?\)/), args: [EPOCH, scheduledAt, null, null, NOW, KEY.tenant, KEY.id], tx: null },
    ]);
  });

  it("the never-Ready deadline is read on the API server's clock: its CR is 11 min old there, 1 min old on the controller's", async () => {
    const apiServerNow = new Date(NOW.getTime() + 600_000);
    const { h, result, ops } = await stepOf({ state: 'delivered' }, { cached: modelService({}), modelService: modelService({}), apiServerNow });
    expect(ops).toEqual(['readModelService', 'deleteModelService']);
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.events.map((e) => e.reason)).toEqual(['NeverReady']);
  });

  it('any other action is re-decided on a live read: the CR the cache lacks is gone → releasing', async () => {
    const { h, result, ops } = await stepOf({ state: 'delivered' }, { cached: null, modelService: null });
    expect(ops).toEqual(['readModelService']);
    expect(result).toEqual({ requeue: true });
    expect(h.writes()).toEqual([
      {
        sql: expect.stringMatching(/^UPDATE reservation r JOIN tenant_fence f .* SET r\.state = \?/),
        args: [EPOCH, 'releasing', NOW, NOW, 'DeletedOutsideModelDock: its ModelService was deleted outside ModelDock: its quota is released once its pods are gone', KEY.tenant, KEY.id, ['delivered']],
        tx: null,
      },
    ]);
  });
});

describe('step: conflict', () => {
  it('a CR under our name of another admission: conflict, counted, a Warning event on it', async () => {
    const foreign = modelService({ admissionId: 'OTHER' });
    const { h, result, ops } = await stepOf({ state: 'ready', binding: { everReady: true } }, { modelService: foreign });
    expect(result).toEqual({});
    expect(ops).toEqual(['readModelService', 'readModelService']);
    const [w] = h.writes();
    // The tenant is shown a code and a message naming nothing of the other admission; the event has the detail.
    expect(w?.args.slice(1, 5)).toEqual(['conflict', NOW, NOW, 'ForeignModelService: a ModelService under its name belongs to another admission: an operator must resolve it']);
    expect(w?.args.at(-1)).toEqual(['ready']);
    expect(await h.count('conflicts')).toBe(1);
    expect(h.events).toEqual([{ type: 'Warning', reason: 'LedgerConflict', note: expect.stringContaining('admission id OTHER'), name: CR_NAME }]);
  });

  it('a conflict transition that matches nothing (state moved, or fenced): not counted, no event', async () => {
    const { h } = await stepOf({ state: 'ready', binding: { everReady: true } }, { modelService: modelService({ admissionId: 'OTHER' }), affected: () => 0 });
    expect(await h.count('conflicts')).toBe(0);
    expect(h.events).toEqual([]);
  });
});

describe('step: replicas', () => {
  it('scaled above the charge (kubectl scale): reverted to the charged replicas on the version decided on, counted, a Warning event', async () => {
    const { h, result } = await stepOf({ state: 'ready', binding: { everReady: true } }, { modelService: modelService({ replicas: 4 }) });
    expect(result).toEqual({});
    expect(h.calls.find((c) => c.op === 'scaleModelService')?.args).toEqual([NAMESPACE, CR_NAME, 2, 'rv-1']);
    expect(h.writes()).toEqual([]);
    expect(await h.count('scaleReverted')).toBe(1);
    expect(h.events).toEqual([
      {
        type: 'Warning',
        reason: 'ExceedsCharge',
        name: CR_NAME,
        note: 'spec.replicas 4 × per-replica resources exceeds the charge (cpu 1000 millicores, memory 1024 MiB, modelservices 1 count): reverted to 2 replicas. Scaling down is allowed; nothing is refunded until the admission is released.',
      },
    ]);
  });

  it.each(['conflict', 'gone'] as const)('a revert answered %s: re-read and re-decide, nothing counted', async (outcome) => {
    const { h, result } = await stepOf({ state: 'ready', binding: { everReady: true } }, { modelService: modelService({ replicas: 4 }), scale: outcome });
    expect(result).toEqual({ requeue: true });
    expect(await h.count('scaleReverted')).toBe(0);
    expect(h.events).toEqual([]);
  });

  it('an accepted increase: the CR is patched to the new replicas, then the generation recorded applied and settled', async () => {
    const change = { generation: 2, applied: 1, settled: 1, fromReplicas: 1 };
    const { h, result } = await stepOf({ state: 'ready', binding: { everReady: true }, change }, { modelService: modelService({ replicas: 1 }) });
    expect(result).toEqual({ requeue: true });
    expect(h.calls.find((c) => c.op === 'scaleModelService')?.args).toEqual([NAMESPACE, CR_NAME, 2, 'rv-1']);
    expect(h.writes()).toEqual([
      {
        sql: expect.stringMatching(/^UPDATE reservation r JOIN tenant_fence f .* SET r\.applied_generation = \?, r\.settled_generation = \?/),
        args: [EPOCH, 2, 2, NOW, KEY.tenant, KEY.id, 2, 2],
        tx: null,
      },
    ]);
  });

  it('a patch of the replicas that finds the CR changed or gone: nothing recorded, re-decided', async () => {
    const change = { generation: 2, applied: 1, settled: 1, fromReplicas: 1 };
    const { h, result } = await stepOf({ state: 'ready', binding: { everReady: true }, change }, { modelService: modelService({ replicas: 1 }), scale: 'gone' });
    expect(result).toEqual({ requeue: true });
    expect(h.writes()).toEqual([]);
  });

  it('a decrease applied while surplus pods still run: live reads of the pods and the Deployment, nothing refunded, look again', async () => {
    const { h, result, ops } = await stepOf(
      { state: 'ready', binding: { everReady: true }, change: DECREASE, amounts: CHARGED_3 },
      { modelService: modelService({ replicas: 2 }), deployment: { ...SETTLED_DEPLOYMENT, statusReplicas: 3 }, cached: modelService({ replicas: 2 }) },
    );
    expect(ops).toEqual(['readModelService', 'listPods', 'readDeployment']);
    expect(result).toEqual({ requeueAfterMs: 2_000 });
    expect(h.writes()).toEqual([]);
  });

  it('a decrease whose surplus pods are gone: amounts down, the refund movement and usage down, in one committed transaction', async () => {
    const { h, result } = await stepOf(
      { state: 'ready', binding: { everReady: true }, change: DECREASE, amounts: CHARGED_3 },
      { modelService: modelService({ replicas: 2 }), deployment: SETTLED_DEPLOYMENT, pods: [{ name: 'p-a', terminating: false }, { name: 'p-b', terminating: false }] },
    );
    expect(result).toEqual({ requeue: true });
    const writes = h.writes();
    expect(writes.map((w) => w.sql)).toEqual([
      expect.stringMatching(/^UPDATE reservation r JOIN tenant_fence f .* SET r\.cpu_millis = r\.cpu_millis - \?.* r\.settled_generation = r\.generation/),
      expect.stringMatching(/^INSERT INTO quota_movement /),
      expect.stringMatching(/^UPDATE tenant_quota SET /),
    ]);
    expect(writes[0]?.args).toEqual([EPOCH, 500, 512, 0, 0, NOW, KEY.tenant, KEY.id, 2]);
    expect(writes[1]?.args).toEqual([KEY.id, 2, 'refund', KEY.tenant, 500, 512, 0, 0, NOW, null]);
    expect(new Set(writes.map((w) => w.tx)).size).toBe(1);
    expect(h.ends).toEqual(['commit']);
    expect(await h.count('refunded')).toBe(1);
  });

  it('a refund that finds nothing to refund (settled meanwhile, or fenced): rolled back after its first statement, not counted', async () => {
    const { h, result } = await stepOf(
      { state: 'ready', binding: { everReady: true }, change: DECREASE, amounts: CHARGED_3 },
      { modelService: modelService({ replicas: 2 }), deployment: SETTLED_DEPLOYMENT, affected: () => 0 },
    );
    expect(result).toEqual({ requeue: true });
    expect(h.writes()).toHaveLength(1);
    expect(h.ends).toEqual(['rollback']);
    expect(await h.count('refunded')).toBe(0);
  });

  it('a refund whose stored spec cannot be read: a terminal error, nothing written', async () => {
    const run = stepOf(
      { state: 'ready', binding: { everReady: true }, change: DECREASE, amounts: CHARGED_3, spec: { replicas: 2 } },
      { modelService: modelService({ replicas: 2 }), deployment: SETTLED_DEPLOYMENT },
    );
    await expect(run).rejects.toBeInstanceOf(TerminalError);
    await expect(run).rejects.toThrow(/cannot be read to refund change 2/);
  });
});
