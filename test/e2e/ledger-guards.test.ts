// What the ledger guards against, end to end on the real stack:
//  - a release never stalls invisibly: a ModelService that stays in deletion with no pod left
//    (a foreign finalizer) is surfaced as ReleaseBlocked, reason Finalizers, naming them — after a
//    tenant DELETE and after a delete behind ModelDock's back — and released once it is gone;
//  - `kubectl scale msvc` cannot exceed the charge: a scale above it is reverted to the charged
//    replicas with a Warning event ExceedsCharge; scaling down is allowed (nothing refunded).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import { metricSum } from '../support/controller-process.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

const HOLD = 'modeldock.test/hold';
let sys: System;
let ctl: ControllerProcess;
beforeAll(async () => {
  sys = await startSystem();
  ctl = await sys.startController('ctl-guards', { RELEASE_BLOCKED_AFTER_MS: '1000' });
});
afterAll(async () => sys?.stop());

const state = async (id: string) => {
  const r = await sys.api(`/requests/${id}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const untilState = (id: string, want: string) => sys.untilState([id], want, 60_000);
const msPath = (name: string) => paths.modelService(sys.tenantNamespace, name);
const podsOf = async (id: string) =>
  (await sys.kube.list<{ metadata: { name: string } }>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` })).items;
const releases = (id: string) => sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = 'release'`, [id]);
const cpu = async () => ((await sys.api('/quota')).body.resources as Record<string, { reserved: number; blocked: number }>).cpu!;

async function admitReady(replicas = 1): Promise<{ id: string; name: string }> {
  const [id] = await sys.admit(1, { replicas, resources: { cpu: '250m', memory: '256Mi' } });
  await untilState(id!, 'ready');
  return { id: id!, name: `md-${id!.toLowerCase()}` };
}

async function hold(name: string): Promise<void> {
  const ms = await sys.kube.get<ModelService>(msPath(name));
  await sys.kube.mergePatch(msPath(name), { metadata: { resourceVersion: ms.metadata.resourceVersion, finalizers: [...(ms.metadata.finalizers ?? []), HOLD] } });
}

async function expectBlockedByFinalizers(id: string, name: string): Promise<void> {
  // While the children go, the CR also carries foregroundDeletion and our own finalizer: the
  // recorded blocker follows what is left until only the foreign finalizer remains.
  const blocked = await sys.until('ReleaseBlocked (Finalizers: only the foreign one) in the tenant API', `/requests/${id}`, (s) =>
    s.releaseBlockedReason === 'Finalizers' && JSON.stringify(s.releaseBlockedFinalizers) === JSON.stringify([HOLD]) ? s : undefined,
  );
  expect(blocked).toMatchObject({ state: 'releasing', releaseBlockedPods: [], releaseBlockedFinalizers: [HOLD] });
  expect(blocked.releaseBlockedSince).toEqual(expect.any(String));
  expect(await podsOf(id)).toEqual([]);
  expect((await cpu()).blocked).toBe(250);
  expect(await releases(id)).toBe(0);
  const cr = await sys.kube.get<ModelService>(msPath(name));
  expect(cr.metadata.finalizers).toEqual([HOLD]); // ours was removed; only the foreign one is left
  expect(cr.status?.conditions?.find((c) => c.type === 'ReleaseBlocked')).toMatchObject({ status: 'True', reason: 'Finalizers' });
  expect(cr.status?.conditions?.find((c) => c.type === 'ReleaseBlocked')?.message).toContain(HOLD);
}

async function lift(id: string, name: string): Promise<void> {
  await sys.kube.mergePatch(msPath(name), { metadata: { finalizers: null } });
  await untilState(id, 'released');
  expect(await releases(id)).toBe(1);
  expect(await sys.check()).toEqual([]);
}

describe('a release never stalls invisibly', () => {
  it('tenant DELETE, the CR held in deletion by a foreign finalizer with no pod left: ReleaseBlocked Finalizers, released once lifted', async () => {
    const { id, name } = await admitReady();
    await hold(name);
    expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await expectBlockedByFinalizers(id, name);
    // Counted right after the ledger recorded it (the tenant API may show it a moment earlier).
    await waitFor('the Finalizers block counted', async () => metricSum(await ctl.metrics(), 'modeldock_release_blocked_total', (l) => l.reason === 'Finalizers') > 0, { timeoutMs: 10_000 });
    await lift(id, name);
  });

  it('deleted behind ModelDock’s back and held by a foreign finalizer: the same, from ready', async () => {
    const { id, name } = await admitReady();
    await hold(name);
    await sys.kube.delete(msPath(name), { propagationPolicy: 'Foreground' });
    await expectBlockedByFinalizers(id, name);
    await lift(id, name);
  });
});

describe('kubectl scale cannot exceed the charge', () => {
  const scale = (name: string, replicas: number) => sys.kube.mergePatch(`${msPath(name)}/scale`, { spec: { replicas } });
  const specReplicas = async (name: string) => (await sys.kube.get<ModelService>(msPath(name))).spec.replicas;
  const exceedsEvents = async (name: string) =>
    (await sys.kube.list<{ reason: string; type: string; note: string; regarding: { name: string } }>(paths.events(sys.tenantNamespace))).items.filter(
      (e) => e.reason === 'ExceedsCharge' && e.regarding.name === name,
    );

  it('a scale above the charge is reverted with a Warning ExceedsCharge; scaling down is allowed and refunds nothing', async () => {
    const before = (await cpu()).reserved;
    const { id, name } = await admitReady(2);
    expect((await cpu()).reserved).toBe(before + 500);

    await scale(name, 4);
    await waitFor('the scale to be reverted to the charged 2 replicas', async () => (await specReplicas(name)) === 2);
    const [event] = await waitFor('an ExceedsCharge event', async () => ((await exceedsEvents(name)).length > 0 ? exceedsEvents(name) : undefined));
    expect(event).toMatchObject({ type: 'Warning' });
    expect(event!.note).toMatch(/spec\.replicas 4 .* reverted to 2 replicas/);
    expect(metricSum(await ctl.metrics(), 'modeldock_ledger_scale_reverted_total')).toBeGreaterThan(0);

    await scale(name, 1);
    await waitFor('one pod left after scaling down', async () => (await podsOf(id)).length === 1);
    expect(await specReplicas(name)).toBe(1);
    expect((await cpu()).reserved).toBe(before + 500); // nothing refunded before release

    // Back up within the charge is fine; above it is reverted to the charge, not to the last scale.
    await scale(name, 3);
    await waitFor('the scale to be reverted to 2 again', async () => (await specReplicas(name)) === 2);
    expect((await state(id)).state).toBe('ready');
    expect(await sys.check()).toEqual([]);
  });
});
