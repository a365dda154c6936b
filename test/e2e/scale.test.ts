// Changing replicas end to end: the tenant API in workerd, the ledger through the
// PlanetScale HTTP API, the controller as its ServiceAccount, kube-apiserver/KCM/scheduler/KWOK.
// Scale up within quota → new pods ready, the delta charged once; beyond quota → 409 and nothing
// changes; scale down → the delta returned only after the surplus pods are gone (held Terminating
// by a finalizer until the test lets them go). Every step is checked with GET /quota and checkLedger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_CONTROLLER } from '../../controller/reservation/setup.ts';
import { paths } from '../../controller/runtime/kube.ts';
import { LABELS } from '../../schema/model-service.ts';
import { metricSum } from '../support/controller-process.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';
import type { ApiBody } from '../support/tenant-api.ts';
import { waitFor } from '../support/wait.ts';

const HOLD = 'modeldock.test/hold';
let sys: System;
let ctl: ControllerProcess;
beforeAll(async () => {
  sys = await startSystem({ quota: ['cpu=2', 'memory=2Gi', 'modelservices=5'] });
  ctl = await sys.startController('ctl-scale');
});
afterAll(async () => sys?.stop());

type Usage = Record<string, { reserved: number; active: number }>;
const cpu = async () => ((await sys.api('/quota')).body.resources as Usage).cpu;
interface Pod {
  metadata: { name: string; deletionTimestamp?: string; finalizers?: string[] };
  status?: { conditions?: Array<{ type: string; status: string }> };
}
const podsOf = async (id: string) => (await sys.kube.list<Pod>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` })).items;
const readyPods = (pods: Pod[]) => pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
const get = async (id: string) => {
  const r = await sys.api(`/requests/${id}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const ledgerReconciles = async () => metricSum(await ctl.metrics(), 'controller_runtime_reconcile_total', (l) => l.controller === LEDGER_CONTROLLER);
const patch = (id: string, replicas: number, key: string) => sys.api(`/requests/${id}`, { method: 'PATCH', body: { replicas }, idempotencyKey: key });
const settled = (id: string) =>
  sys.until(`admission ${id}: no pending change`, `/requests/${id}`, (a) => (a.pendingChange === null ? a : undefined), { timeoutMs: 60_000 });
const movements = (id: string) =>
  sys.ledger.db
    .execute('SELECT generation, direction, cpu_millis FROM quota_movement WHERE reservation_id = ? ORDER BY generation, direction', [id])
    .then((r) => r.rows.map((m) => `${Number(m.generation)}:${String(m.direction)}:${Number(m.cpu_millis)}`));

describe('scaling through the ledger', () => {
  it('up within quota, refused beyond it, down only once the surplus pods are gone', async () => {
    const created = await sys.api('/requests', {
      method: 'POST',
      body: { name: 'scaled', image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '500m', memory: '512Mi' } },
      idempotencyKey: 'scale-1',
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await sys.untilState([id], 'ready');
    expect(await cpu()).toMatchObject({ reserved: 500, active: 500 });

    // Up 1 → 3: charged at once (the answer already says so), applied by the controller, new pods ready.
    const up = await patch(id, 3, 'up-3');
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    expect(up.body).toMatchObject({ replicas: 3, chargedReplicas: 3, generation: 2, pendingChange: { fromReplicas: 1, toReplicas: 3 } });
    expect(await cpu()).toMatchObject({ reserved: 1500, active: 1500 });
    expect((await patch(id, 3, 'up-3')).status).toBe(200); // a retry changes nothing again
    await settled(id);
    await waitFor('3 pods ready', async () => readyPods(await podsOf(id)).length === 3, { timeoutMs: 60_000 });
    expect(await get(id)).toMatchObject({ state: 'ready', replicas: 3, chargedReplicas: 3 });
    expect(await cpu()).toMatchObject({ reserved: 1500, active: 1500 });
    expect(await movements(id)).toEqual(['1:charge:500', '2:charge:1000']);
    expect(await sys.check()).toEqual([]);

    // Beyond quota (3 → 5 needs 1000m more, 500m is left): 409 with the shortfall, nothing changes.
    const before = await sys.ledger.fingerprint();
    const refused = await patch(id, 5, 'up-5');
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe('quota_exceeded');
    expect((refused.body.error as ApiBody['error'] & { details: unknown }).details).toEqual({
      shortfalls: [
        { resource: 'cpu', requested: 1000, available: 500, short: 500 },
        { resource: 'memory', requested: 1024, available: 512, short: 512 },
      ],
    });
    expect(await sys.ledger.fingerprint()).toBe(before);
    expect(await podsOf(id)).toHaveLength(3);

    // Down 3 → 1 with every pod held by a finalizer: the surplus pods stay Terminating, the quota stays charged.
    const held = await podsOf(id);
    expect(held).toHaveLength(3);
    for (const p of held) await sys.kube.mergePatch(`${paths.pods(sys.tenantNamespace)}/${p.metadata.name}`, { metadata: { finalizers: [HOLD] } });
    const down = await patch(id, 1, 'down-1');
    expect(down.status, JSON.stringify(down.body)).toBe(202);
    expect(down.body).toMatchObject({ replicas: 1, chargedReplicas: 3, pendingChange: { fromReplicas: 3, toReplicas: 1 } });
    const terminating = await waitFor('2 surplus pods Terminating', async () => {
      const t = (await podsOf(id)).filter((p) => p.metadata.deletionTimestamp);
      return t.length === 2 ? t : undefined;
    }, { timeoutMs: 60_000 });
    expect(terminating.length).toBeGreaterThan(0);
    await sys.until('the decrease to await its scale-down', `/requests/${id}`, (a) => (a.pendingChange as { phase?: string } | null)?.phase === 'awaitingScaleDown', { timeoutMs: 30_000 });
    // Several of the ledger's re-checks later (counted, not waited for: an awaited scale-down is
    // reconciled again every few seconds, and this is the only live admission), still charged for 3.
    const rechecks0 = await ledgerReconciles();
    await waitFor('3 more ledger reconciles while the surplus pods are held', async () => (await ledgerReconciles()) >= rechecks0 + 3, { timeoutMs: 30_000 });
    expect(await get(id)).toMatchObject({ chargedReplicas: 3, pendingChange: { phase: 'awaitingScaleDown' } });
    expect(await cpu()).toMatchObject({ reserved: 1500 });
    expect(await movements(id)).toEqual(['1:charge:500', '2:charge:1000']);
    expect(await sys.check(false)).toEqual([]);

    // Let the surplus pods go (and the kept one run on): the delta is refunded, once.
    for (const p of held) await sys.kube.mergePatch(`${paths.pods(sys.tenantNamespace)}/${p.metadata.name}`, { metadata: { finalizers: null } });
    const done = await settled(id);
    expect(done).toMatchObject({ state: 'ready', replicas: 1, chargedReplicas: 1, amounts: { cpu: 500, memory: 512 } });
    for (const p of terminating) expect((await podsOf(id)).map((q) => q.metadata.name)).not.toContain(p.metadata.name);
    expect(await podsOf(id)).toHaveLength(1);
    expect(await cpu()).toMatchObject({ reserved: 500, active: 500 });
    expect(await movements(id)).toEqual(['1:charge:500', '2:charge:1000', '3:refund:1000']);
    expect(await sys.check()).toEqual([]);

    // DELETE then releases what is left, exactly once.
    expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await sys.untilState([id], 'released');
    expect(await cpu()).toMatchObject({ reserved: 0 });
    expect(await movements(id)).toEqual(['1:charge:500', '2:charge:1000', '3:refund:1000', '3:release:500']);
    await sys.untilSettled();
  });
});
