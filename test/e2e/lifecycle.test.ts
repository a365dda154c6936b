// End to end, every component real: the tenant API in workerd, MariaDB through the PlanetScale
// HTTP API, the controller as a child process, and kube-apiserver/KCM/scheduler/KWOK.
// POST → CR → pods Ready → ready with endpoint → DELETE → foreground deletion → pods gone →
// quota released exactly once; GET /quota matches at every step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import { LABELS } from '../../schema/model-service.ts';
import { startSystem, type System } from '../support/system.ts';

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
  await sys.startController('ctl-lifecycle');
});
afterAll(async () => sys?.stop());

const body = {
  name: 'chat',
  image: 'ghcr.io/acme/mock-model:0.1.0',
  replicas: 2,
  resources: { cpu: '500m', memory: '1Gi' },
};
type Usage = Record<string, { hard: number; reserved: number; active: number; releasing: number; blocked: number }>;
const quota = async (): Promise<Usage> => (await sys.api('/quota')).body.resources as Usage;

describe('admission lifecycle', () => {
  it('delivers, becomes ready, deletes with foreground GC and releases exactly once', async () => {
    expect((await quota()).cpu).toMatchObject({ hard: 16000, reserved: 0, active: 0 });

    const created = await sys.api('/requests', { method: 'POST', body, idempotencyKey: 'life-1' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await quota()).cpu).toMatchObject({ reserved: 1000, active: 1000 });

    const [ready] = await sys.untilState([id], 'ready', 60_000);
    if (!ready) throw new Error('untilState returned no body');
    const name = `md-${id.toLowerCase()}`;
    // The tenant-facing URL (docs/gateway.md); the CR's status keeps the in-cluster one for operators.
    expect(ready.endpoint).toBe(`${sys.worker.url}/v1/models/${id}`);
    expect(ready.binding).toMatchObject({ namespace: sys.tenantNamespace, crName: name, everReady: true });
    // The startup timeline: every moment reached, in order (Kubernetes' times have second
    // precision, so moments are compared by the second), each with its time since admission.
    const tl = ready.timeline as Record<string, string | null> & { sinceAdmissionMs: Record<string, number | null> };
    const moments = ['admittedAt', 'deliveredAt', 'scheduledAt', 'startedAt', 'readyAt'] as const;
    for (const m of moments) expect(tl[m], m).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const second = (m: (typeof moments)[number]) => Math.floor(Date.parse(tl[m]!) / 1000);
    for (let i = 1; i < moments.length; i++) expect(second(moments[i]!), `${moments[i - 1]} ≤ ${moments[i]}`).toBeGreaterThanOrEqual(second(moments[i - 1]!));
    expect(tl.admittedAt).toBe(created.body.createdAt);
    for (const stage of ['delivered', 'scheduled', 'started', 'ready']) expect(tl.sinceAdmissionMs[stage], stage).toBeGreaterThanOrEqual(0);
    expect(ready.lastFailure).toBeNull();
    console.log(`startup timeline of ${id}: ${JSON.stringify(tl)}`);
    const pods = await sys.kube.list<{ metadata: { name: string } }>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` });
    expect(pods.items).toHaveLength(2);
    expect((await quota()).cpu).toMatchObject({ reserved: 1000, active: 1000 });
    expect(await sys.check()).toEqual([]);

    const del = await sys.api(`/requests/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(202);
    expect(del.body.state).toBe('deleting');
    // Kept until the pods are gone: read the quota, then the state; if the admission was not yet
    // released after the quota read, it was not released before it either.
    const during = await quota();
    if ((await sys.api(`/requests/${id}`)).body.state !== 'released') expect(during.cpu!.reserved).toBe(1000);

    await sys.untilState([id], 'released', 60_000);
    const left = await sys.kube.list(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` });
    expect(left.items).toHaveLength(0);
    expect(await sys.kube.getOrUndefined(`/apis/modeldock.io/v1alpha1/namespaces/${sys.tenantNamespace}/modelservices/${name}`)).toBeUndefined();
    expect((await quota()).cpu).toMatchObject({ reserved: 0, active: 0, releasing: 0 });
    expect(await sys.ledger.count('SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ?', [id])).toBe(2);
    expect(await sys.check()).toEqual([]);
  });
});
