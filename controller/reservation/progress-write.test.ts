// Recording the startup progress never blocks the step's action: a binding write that fails (a
// tenant's termination message the column refused, the database gone for that one statement) is
// logged with the reconcile key, and the never-Ready deadline, first Ready, a change of replicas
// and the reconcile's acknowledgements all happen.
import { describe, expect, it } from 'vitest';
import type { SqlArg } from '../../ledger/db.ts';
import type { Failure, ModelService } from '../../schema/model-service.ts';
import { splitKey } from '../runtime/controller.ts';
import { silentLogger } from '../runtime/log.ts';
import { reconcileHarness, stepOf } from '../../test/support/reconcile-harness.ts';
import { ago, BOUND_UID, claimedRow, CR_NAME, EPOCH, KEY, modelService, NAMESPACE, reservationRow } from '../../test/support/reservation-fixtures.ts';
import { reservationKey } from './key.ts';
import { reservationReconciler } from './reconcile.ts';

const QUOTES: Failure = { reason: 'CrashLoopBackOff', message: '"'.repeat(4096), pod: 'md-x-1', container: 'model', exitCode: 1, at: '2026-03-01T11:59:00Z' };

/** The CR of `over`, its status reporting a pod failure (and the first pod bound). */
const failing = (over: Parameters<typeof modelService>[0] = {}): ModelService => {
  const ms = modelService(over);
  return { ...ms, status: { ...ms.status, scheduledAt: ago(50_000).toISOString(), lastFailure: QUOTES } };
};

const REFUSED = "target: modeldock.-.primary: vttablet: rpc error: Data too long for column 'last_failure' at row 1 (errno 1406) (sqlstate 22001)";
/** The progress write fails as MySQL refused it; every other write matches one row. */
const progressRefused = (sql: string, _args: readonly SqlArg[]): number => {
  if (sql.startsWith('UPDATE binding b') && sql.includes('b.last_failure')) throw new Error(REFUSED);
  return 1;
};
const progressWrites = (h: { writes(): Array<{ sql: string }> }) => h.writes().filter((w) => w.sql.includes('b.last_failure'));

describe('a progress write that fails does not block the action', () => {
  it('the never-Ready deadline: the CR is deleted with its preconditions and the reservation moves to releasing', async () => {
    const { h, result } = await stepOf({ state: 'delivered' }, { modelService: failing({ createdAt: ago(700_000) }), affected: progressRefused });
    expect(progressWrites(h)).toHaveLength(1); // tried, and refused
    expect(h.calls.find((c) => c.op === 'deleteModelService')?.args).toEqual([NAMESPACE, CR_NAME, { uid: BOUND_UID, resourceVersion: 'rv-1' }]);
    expect(h.writes().at(-1)?.args.slice(0, 2)).toEqual([EPOCH, 'releasing']);
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.logs.find((l) => l.level === 'warn')).toMatchObject({ msg: expect.stringMatching(/^startup progress not recorded/), failure: 'CrashLoopBackOff', error: REFUSED });
  });

  it('first Ready, decided on the cache: delivered → ready is recorded', async () => {
    const { h, result } = await stepOf({ state: 'delivered' }, { cached: failing({ ready: true }), affected: progressRefused });
    expect(result).toEqual({});
    expect(h.writes().map((w) => w.sql)).toEqual([
      expect.stringMatching(/b\.last_failure/),
      expect.stringMatching(/SET r\.state = 'ready'/),
      expect.stringMatching(/SET b\.ever_ready = 1/),
    ]);
    expect(h.ends).toEqual(['commit']);
  });

  it('a change of replicas: the CR is patched to the new replicas and the change recorded applied', async () => {
    const change = { generation: 2, applied: 1, settled: 1, fromReplicas: 1 };
    const { h, result } = await stepOf({ state: 'ready', binding: { everReady: true }, change }, { modelService: failing({ replicas: 1 }), affected: progressRefused });
    expect(h.calls.find((c) => c.op === 'scaleModelService')?.args).toEqual([NAMESPACE, CR_NAME, 2, 'rv-1']);
    expect(h.writes().at(-1)?.sql).toMatch(/SET r\.applied_generation = \?, r\.settled_generation = \?/);
    expect(result).toEqual({ requeue: true });
  });

  it('the reconcile: nothing thrown, its claimed row acknowledged, and the warning carries the reconcile key', async () => {
    const h = reconcileHarness({
      records: [reservationRow({ state: 'delivered', lastReconciledAt: ago(1_000) })],
      modelService: failing({ createdAt: ago(700_000) }),
      claims: [claimedRow(1, 'reconcile')],
      affected: progressRefused,
    });
    const key = reservationKey(KEY);
    const result = await reservationReconciler(h.deps)(splitKey(key), { log: silentLogger, fresh: false, signal: new AbortController().signal });
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.calls.map((c) => c.op)).toContain('deleteModelService');
    expect(h.writes().at(-1)?.sql).toMatch(/^UPDATE outbox o .* SET o\.done_at = \?/);
    expect(h.kept).toEqual([]);
    expect(h.logs.find((l) => l.level === 'warn')).toMatchObject({ key, admissionId: KEY.id, msg: expect.stringMatching(/^startup progress not recorded/) });
  });

  it('a progress write that succeeds logs no warning (the same step, nothing refused)', async () => {
    const { h } = await stepOf({ state: 'delivered' }, { modelService: failing({ createdAt: ago(700_000) }) });
    expect(progressWrites(h)).toHaveLength(1);
    expect(h.logs.filter((l) => l.level === 'warn')).toEqual([]);
  });
});
