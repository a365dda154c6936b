// The edges of one reservation reconcile that the main suite passes by: the fence it raises, when
// the record read with the claim stands in for a read, when a delivery ends the reconcile, the
// once-a-minute touch at its boundary, and the fields of the log lines an operator searches for.
import { describe, expect, it } from 'vitest';
import { splitKey, type Request } from '../runtime/controller.ts';
import { silentLogger } from '../runtime/log.ts';
import { ledgerRecord, reconcileHarness, type Harness, type HarnessOptions } from '../../test/support/reconcile-harness.ts';
import { ago, claimedRow, KEY, modelService, reservationRow } from '../../test/support/reservation-fixtures.ts';
import { reservationKey } from './key.ts';
import { reservationReconciler } from './reconcile.ts';

const REQUEST: Request = splitKey(reservationKey(KEY));
const ctx = () => ({ log: silentLogger, fresh: false, signal: new AbortController().signal });

async function reconcile(o: HarnessOptions, req: Request = REQUEST): Promise<{ h: Harness; result: unknown; err: unknown }> {
  const h = reconcileHarness(o);
  try {
    return { h, result: await reservationReconciler(h.deps)(req, ctx()), err: undefined };
  } catch (err) {
    return { h, result: undefined, err };
  }
}

const recordReads = (h: Harness) => h.statements.filter((s) => /^\s*SELECT r\.id, r\.tenant/.test(s.sql)).length;
const line = (h: Harness, msg: string) => {
  const found = h.logs.find((l) => l.msg === msg);
  if (!found) throw new Error(`no log line "${msg}" in ${JSON.stringify(h.logs.map((l) => l.msg))}`);
  const { time: _time, ...rest } = found;
  return rest;
};
const ADMITTED = reservationRow({ state: 'admitted', binding: null });

describe('reconcile: the fence and the reads', () => {
  it("raises the fence of the key's tenant before anything of it is read", async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'ready', binding: { everReady: true }, lastReconciledAt: ago(1_000) })], cached: modelService({ ready: true }) });
    expect(h.fenced).toEqual([[KEY.tenant]]);
  });

  it('a record prefetched but no claim handed over: the reservation is read, not taken from the prefetch', async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'ready', binding: { everReady: true }, lastReconciledAt: ago(1_000) })], prefetched: await ledgerRecord({ state: 'admitted', binding: null }), cached: modelService({ ready: true }) });
    expect(recordReads(h)).toBe(1);
    expect(h.calls.map((c) => c.op)).toEqual([]); // the ledger's `ready` record decided, not the prefetched `admitted`
  });

  it('a create claimed with another row: the record is read, not taken from the prefetch', async () => {
    const { h } = await reconcile({
      records: [ADMITTED, reservationRow({ state: 'delivered' })],
      prefetched: await ledgerRecord({ state: 'admitted', binding: null }),
      claims: [claimedRow(1, 'create'), claimedRow(2, 'reconcile')],
      cached: modelService({}),
    });
    expect(recordReads(h)).toBe(2); // before the delivery, and after it
  });

  it('a create claimed for a reservation no longer admitted: no CR, the row acknowledged, the record read once', async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'deleting', binding: null })], claims: [claimedRow(1, 'create')], modelService: null, pods: [] });
    expect(h.calls.map((c) => c.op)).not.toContain('createModelService');
    expect(h.writes()[0]?.sql).toMatch(/^UPDATE outbox o .* SET o\.done_at = \?/);
    expect(recordReads(h)).toBe(1);
  });

  it('a create delivered together with a delete row: the step runs at once and acknowledges the delete row', async () => {
    const { h } = await reconcile({
      records: [ADMITTED, reservationRow({ state: 'deleting' })],
      claims: [claimedRow(1, 'create'), claimedRow(2, 'delete')],
      modelService: modelService(),
    });
    expect(h.calls.map((c) => c.op)).toEqual(['ensureTenantSpace', 'createModelService', 'readModelService', 'listPods', 'deleteModelService']);
    const done = h.writes().filter((w) => /SET o\.done_at = \?/.test(w.sql)).map((w) => w.args[3]);
    expect(done).toEqual([1, 2]);
  });

  it('the step logs carry the request id of the admission', async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'deleting' })], claims: [claimedRow(4, 'delete')], modelService: modelService() });
    expect(line(h, 'ModelService delete issued')).toMatchObject({ reqId: 'req-1', admissionId: KEY.id });
  });

  it('looked at exactly a minute ago: not touched yet', async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'ready', binding: { everReady: true }, lastReconciledAt: ago(60_000) })], cached: modelService({ ready: true }) });
    expect(h.writes()).toEqual([]);
  });
});

describe('reconcile: the log lines of a failed delivery', () => {
  it('a key without a tenant: the key is logged', async () => {
    const { h } = await reconcile({ records: [] }, splitKey('01HRESERVATION'));
    expect(line(h, 'ledger key without a tenant: dropped')).toEqual({ level: 'error', msg: 'ledger key without a tenant: dropped', key: '01HRESERVATION' });
  });

  it('a refused delivery: the row, its kind, the reason and the error', async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'admitted', binding: null, spec: { replicas: 1 } }), reservationRow({ state: 'conflict', binding: null })], claims: [claimedRow(1, 'create')] });
    expect(line(h, 'delivery refused: it cannot succeed')).toMatchObject({ level: 'error', seq: 1, kind: 'create', reason: 'InvalidSpec', error: expect.stringMatching(/^the admitted spec is not a valid ModelService spec: /) });
  });

  it('a retried row: its attempt number', async () => {
    const { h } = await reconcile({ records: [ADMITTED], claims: [claimedRow(1, 'create', { attempts: 2 })], create: new Error('apiserver unavailable') });
    expect(line(h, 'outbox row retried later')).toMatchObject({ level: 'info', seq: 1, kind: 'create', attempt: 3 });
  });

  it('a row whose claim was lost: its seq, kind and error', async () => {
    const { h } = await reconcile({ records: [ADMITTED], claims: [claimedRow(1, 'create')], create: new Error('apiserver unavailable'), affected: () => 0 });
    expect(line(h, 'outbox row not given back: its claim was lost')).toMatchObject({ level: 'info', seq: 1, kind: 'create', error: 'apiserver unavailable' });
  });

  it('a row whose failure could not be written: neither retried nor lost is claimed in the log', async () => {
    const { h } = await reconcile({
      records: [ADMITTED],
      claims: [claimedRow(1, 'create')],
      create: new Error('apiserver unavailable'),
      affected: (sql) => {
        if (sql.includes('o.attempts = o.attempts + 1')) throw new Error('database unavailable');
        return 1;
      },
    });
    expect(h.logs.map((l) => l.msg)).not.toContain('outbox row not given back: its claim was lost');
    expect(h.logs.map((l) => l.msg)).not.toContain('outbox row retried later');
  });

  it('a dead row: its seq and kind', async () => {
    const { h } = await reconcile({
      records: [reservationRow({ state: 'ready', binding: { everReady: true }, change: { generation: 2, applied: 2, settled: 1, fromReplicas: 3 }, amounts: { cpu: 1500, memory: 1536, 'nvidia.com/gpu': 0, modelservices: 1 }, spec: { replicas: 2 } })],
      claims: [claimedRow(5, 'scale')],
      modelService: modelService({ replicas: 2 }),
      deployment: { generation: 3, observedGeneration: 3, specReplicas: 2, statusReplicas: 2 },
    });
    expect(line(h, 'outbox row is dead: its error cannot be retried away')).toMatchObject({ level: 'error', seq: 5, kind: 'scale' });
  });
});
