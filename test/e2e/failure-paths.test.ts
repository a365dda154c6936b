// The release rules under adverse conditions, end to end on the real stack:
//  - a pod held in Terminating keeps the quota and shows ReleaseBlocked until it is gone;
//  - a ModelService never Ready within READY_DEADLINE is deleted (preconditions) and released;
//  - a CR deleted behind ModelDock's back is released; one replaced by a same-named object with
//    another UID is a conflict and is NOT released;
//  - with the informer fast paths off and events missed, the Worker's scheduled() run enqueues
//    reconcile rows and the controller repairs the ledger from them.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { LEDGER_CONTROLLER } from '../../controller/reservation/setup.ts';
import { CONTROLLER_NAME } from '../../controller/modelservice/setup.ts';
import { paths } from '../../controller/runtime/kube.ts';
import { LABELS } from '../../schema/model-service.ts';
import { metricSum } from '../support/controller-process.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

let sys: System;
let ctl: ControllerProcess;
const CTL_ENV = { READY_DEADLINE_MS: '4000', RELEASE_BLOCKED_AFTER_MS: '1000' };
beforeAll(async () => {
  sys = await startSystem({ workerVars: { RECONCILE_STALE_AFTER_SECONDS: '0' } });
  ctl = await sys.startController('ctl-failures', CTL_ENV);
});
afterAll(async () => sys?.stop());

async function admit(image = 'ghcr.io/acme/model:1'): Promise<{ id: string; name: string }> {
  const [id] = await sys.admit(1, { image, resources: { cpu: '250m', memory: '256Mi' } });
  return { id: id!, name: `md-${id!.toLowerCase()}` };
}
const state = async (id: string) => {
  const r = await sys.api(`/requests/${id}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const untilState = async (id: string, want: string, timeoutMs = 60_000) => (await sys.untilState([id], want, timeoutMs))[0]!;
const msPath = (name: string) => `/apis/modeldock.io/v1alpha1/namespaces/${sys.tenantNamespace}/modelservices/${name}`;
const podsOf = async (id: string) =>
  (await sys.kube.list<{ metadata: { name: string; finalizers?: string[] } }>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` })).items;
const movements = (id: string) => sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = 'release'`, [id]);

describe('release rules', () => {
  it('a pod held in Terminating keeps the quota, surfaces ReleaseBlocked, and releases once it is gone', async () => {
    const { id, name } = await admit();
    await untilState(id, 'ready');
    const [pod] = await podsOf(id);
    await sys.kube.mergePatch(`${paths.pods(sys.tenantNamespace)}/${pod!.metadata.name}`, { metadata: { finalizers: ['modeldock.test/hold'] } });

    expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    const blocked = await sys.until('ReleaseBlocked in the tenant API', `/requests/${id}`, (s) => (s.releaseBlockedSince ? s : undefined));
    expect(blocked.state).toBe('releasing');
    expect(blocked.releaseBlockedPods).toEqual([pod!.metadata.name]);
    const q = (await sys.api('/quota')).body.resources as Record<string, { reserved: number; blocked: number }>;
    expect(q.cpu!.blocked).toBe(250);
    expect(await movements(id)).toBe(0);
    // The CR still exists (foreground deletion waits for the held pod), and carries the condition.
    await waitFor('the ReleaseBlocked condition on the ModelService', async () => {
      const cr = await sys.kube.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(msPath(name));
      return cr.status?.conditions?.find((c) => c.type === 'ReleaseBlocked')?.status === 'True';
    }, { timeoutMs: 10_000 });
    expect(metricSum(await ctl.metrics(), 'modeldock_release_blocked_total')).toBeGreaterThan(0);

    await sys.kube.mergePatch(`${paths.pods(sys.tenantNamespace)}/${pod!.metadata.name}`, { metadata: { finalizers: null } });
    await untilState(id, 'released');
    expect(await movements(id)).toBe(1);
    expect(await sys.check()).toEqual([]);
  });

  it('deletes a ModelService that is never Ready within READY_DEADLINE and releases its quota', async () => {
    const { id, name } = await admit('example.invalid/modeldock/never-ready:1');
    const released = await untilState(id, 'released');
    expect(released.lastError).toMatch(/never Ready/);
    expect(released.binding).toMatchObject({ everReady: false });
    expect(await sys.kube.getOrUndefined(msPath(name))).toBeUndefined();
    expect(await podsOf(id)).toEqual([]);
    expect(await movements(id)).toBe(1);
  });

  it('a failing start shows lastFailure in the tenant API before the never-Ready deadline deletes it', async () => {
    const { id } = await admit('example.invalid/modeldock/crash-loop:1');
    const released = await untilState(id, 'released');
    // Copied only while the admission is delivered: present now means seen before the deadline.
    expect(released.lastFailure).toMatchObject({ reason: 'CrashLoopBackOff', exitCode: 1, container: 'model', pod: expect.stringMatching(/^md-/) });
    const { lastFailure, timeline } = released as { lastFailure: { at: string }; timeline: { deliveredAt: string } };
    expect(Date.parse(lastFailure.at)).toBeLessThan(Date.parse(timeline.deliveredAt) + Number(CTL_ENV.READY_DEADLINE_MS));
    expect(released.timeline).toMatchObject({ deliveredAt: expect.any(String), scheduledAt: expect.any(String), readyAt: null });
    expect(released.lastError).toMatch(/never Ready/);
  });

  it('releases the quota of a ModelService deleted behind ModelDock’s back', async () => {
    const { id, name } = await admit();
    await untilState(id, 'ready');
    await sys.kube.delete(msPath(name), { propagationPolicy: 'Foreground' });
    await untilState(id, 'released');
    expect(await movements(id)).toBe(1);
    expect(await sys.check()).toEqual([]);
  });

  it('flags a same-named replacement with another UID as conflict and never releases it', async () => {
    const { id, name } = await admit();
    await untilState(id, 'ready');
    const original = await sys.kube.get<{ metadata: { uid: string; labels: Record<string, string> }; spec: unknown }>(msPath(name));
    // Replace it while the controller is down, so no event in between is seen.
    await ctl.proc.stop();
    await sys.kube.delete(msPath(name));
    // Nobody runs the finalizer while the controller is down: lift it, as an operator would.
    await sys.kube.mergePatch(msPath(name), { metadata: { finalizers: null } });
    await waitFor('the original to be gone', async () => (await sys.kube.getOrUndefined(msPath(name))) === undefined);
    const replacement = await sys.kube.create<{ metadata: { uid: string } }>(`/apis/modeldock.io/v1alpha1/namespaces/${sys.tenantNamespace}/modelservices`, {
      apiVersion: 'modeldock.io/v1alpha1',
      kind: 'ModelService',
      metadata: { name, labels: original.metadata.labels },
      spec: original.spec,
    });
    expect(replacement.metadata.uid).not.toBe(original.metadata.uid);
    ctl = await sys.startController('ctl-failures-2', CTL_ENV);

    const conflict = await untilState(id, 'conflict');
    expect(conflict.lastError).toMatch(/UID/);
    expect(await movements(id)).toBe(0);
    expect(await sys.kube.getOrUndefined(msPath(name))).toBeDefined(); // never deleted automatically
    expect(metricSum(await ctl.metrics(), 'modeldock_ledger_conflicts_total')).toBeGreaterThan(0);
    // Clean up by hand, as the operator would, so later checks see no orphan.
    await sys.kube.delete(msPath(name));
  });
});

describe('scheduled safety net', () => {
  it('with fast paths off and events missed, scheduled() enqueues reconcile rows and the controller repairs the ledger', async () => {
    const { id, name } = await admit();
    await untilState(id, 'ready');
    await ctl.proc.stop();
    ctl = await sys.startController('ctl-no-fast-path', { ...CTL_ENV, LEDGER_FAST_PATHS: 'false' });
    // The tests after this one rely on the fast paths: the suite's controller is back when it ends.
    onTestFinished(async () => {
      await ctl.proc.stop();
      ctl = await sys.startController('ctl-failures-restored', CTL_ENV);
    });
    const ledgerAdds = async () => metricSum(await ctl.metrics(), 'workqueue_adds_total', (l) => l.name === LEDGER_CONTROLLER);
    const modelServiceReconciles = async () => metricSum(await ctl.metrics(), 'controller_runtime_reconcile_total', (l) => l.controller === CONTROLLER_NAME);
    const [adds0, reconciles0] = [await ledgerAdds(), await modelServiceReconciles()];
    await sys.kube.delete(msPath(name), { propagationPolicy: 'Foreground' });
    await waitFor('the CR to be gone', async () => (await sys.kube.getOrUndefined(msPath(name))) === undefined);
    // Nothing noticed — proven by an event, not by waiting a while: the ModelService controller
    // reconciled the deletion, so the shared informer has dispatched its events (a fast path's
    // handler runs in that same dispatch), and the ledger's queue got no key from them.
    await waitFor('the ModelService controller to reconcile the deletion', async () => (await modelServiceReconciles()) > reconciles0);
    expect(await ledgerAdds()).toBe(adds0);
    expect((await state(id)).state).toBe('ready');

    expect(await sys.worker.scheduled('*/5 * * * *', Date.now())).toBe(200);
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'reconcile'`, [id])).toBe(1);
    await untilState(id, 'released');
    expect(await movements(id)).toBe(1);
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'reconcile' AND done_at IS NULL`, [id])).toBe(0);
  });
});
