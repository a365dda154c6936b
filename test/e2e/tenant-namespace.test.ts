// A namespace per tenant, end to end: the controller creates the tenant's namespace with its first
// delivery (labelled, Pod Security restricted), a ResourceQuota mirroring the tenant's hard quota
// in the ledger and the tenant's NetworkPolicies, and puts the ModelService, Deployment, Service
// and pods there — nothing of the tenant's in the namespace ModelDock is installed in. An
// operator's change of the quota reaches the ResourceQuota. And the defence in depth: with the
// ledger's `used` lowered behind its back (a simulated ledger bug), the ledger admits beyond the
// hard quota, but the API server refuses the pods, and the tenant is told why (QuotaExceeded).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import { POLICY_NAMES } from '../../controller/tenant/network-policy.ts';
import { TENANT_QUOTA_NAME, type ResourceQuota } from '../../controller/tenant/quota.ts';
import { LABELS } from '../../schema/model-service.ts';
import { startSystem, TENANT, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

let sys: System;
beforeAll(async () => {
  sys = await startSystem({ quota: ['cpu=1', 'memory=4Gi', 'modelservices=10'] });
  await sys.startController('ctl-tenancy', { TENANT_SYNC_MS: '1000', MAX_REPLICAS: '4' });
});
afterAll(async () => sys?.stop());

const quota = () => sys.kube.get<ResourceQuota>(`${paths.resourceQuotas(sys.tenantNamespace)}/${TENANT_QUOTA_NAME}`);
const ofAdmission = (id: string) => ({ labelSelector: `${LABELS.admissionId}=${id}` });

describe('a namespace per tenant', () => {
  it("the tenant's objects live in its own namespace, created by the controller with the quota and the policies; none in ModelDock's", async () => {
    const [id] = await sys.admit(1, { resources: { cpu: '500m', memory: '512Mi' } });
    await sys.untilState([id!], 'ready');
    const ns = await sys.kube.get<{ metadata: { labels: Record<string, string> } }>(paths.namespace(sys.tenantNamespace));
    expect(ns.metadata.labels).toMatchObject({
      [LABELS.managedBy]: 'modeldock',
      [LABELS.tenant]: TENANT,
      [LABELS.instance]: sys.namespace,
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
    const body = (await sys.api(`/requests/${id}`)).body;
    expect(body.binding).toMatchObject({ namespace: sys.tenantNamespace });
    for (const list of [paths.modelServices, paths.deployments, paths.services, paths.pods]) {
      expect((await sys.kube.list(list(sys.tenantNamespace), ofAdmission(id!))).items, list('x')).toHaveLength(1);
      expect((await sys.kube.list(list(sys.namespace), ofAdmission(id!))).items, list('x')).toHaveLength(0);
    }
    expect((await quota()).spec?.hard).toEqual({
      'requests.cpu': '1',
      'limits.cpu': '1',
      'requests.memory': '4Gi',
      'limits.memory': '4Gi',
      'requests.nvidia.com/gpu': '0',
      pods: '40', // modelservices=10 × MAX_REPLICAS=4
    });
    const policies = await sys.kube.list<{ metadata: { name: string } }>(paths.networkPolicies(sys.tenantNamespace));
    expect(policies.items.map((p) => p.metadata.name).sort()).toEqual(Object.values(POLICY_NAMES).sort());
    expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await sys.untilState([id!], 'released');
  });

  it("an operator's change of the tenant's hard quota reaches its ResourceQuota within the sync period", async () => {
    await sys.tenantSpace();
    await sys.ledger.setQuota(TENANT, 'cpu=2', 'memory=4Gi', 'modelservices=10');
    await waitFor('the ResourceQuota to follow the ledger', async () => ((await quota()).spec?.hard?.['requests.cpu'] === '2' ? true : undefined), { timeoutMs: 20_000 });
    await sys.ledger.setQuota(TENANT, 'cpu=1', 'memory=4Gi', 'modelservices=10');
    await waitFor('…and back', async () => ((await quota()).spec?.hard?.['requests.cpu'] === '1' ? true : undefined), { timeoutMs: 20_000 });
  });

  it("with the ledger's used lowered behind its back, the API server still refuses pods beyond the hard quota, and the tenant sees QuotaExceeded", async () => {
    await sys.tenantSpace();
    const full = await sys.admit(2, { resources: { cpu: '500m', memory: '256Mi' } });
    await sys.untilState(full, 'ready');
    // The simulated ledger bug: the tenant's cpu looks unused.
    await sys.ledger.db.execute(`UPDATE tenant_quota SET used = 0 WHERE tenant = ? AND resource = 'cpu'`, [TENANT]);
    const [over] = await sys.admit(1, { name: 'over-quota', resources: { cpu: '500m', memory: '256Mi' } });
    const [shown] = await sys.untilAll('the refusal shown to the tenant', [over!], (b) => (b.lastFailure as { reason?: string } | null)?.reason === 'QuotaExceeded', { timeoutMs: 60_000 });
    expect(shown!.state).toBe('delivered'); // never ready: no pod of it runs
    expect((shown!.lastFailure as { message: string }).message).toMatch(/^the tenant namespace's ResourceQuota refused a pod: exceeded quota: modeldock-tenant-quota, requested: .*cpu=500m/);
    expect((await sys.kube.list(paths.pods(sys.tenantNamespace), ofAdmission(over!))).items).toHaveLength(0);
    expect((await quota()).status?.used?.['requests.cpu']).toBe('1');

    // The bug repaired by hand, everything released; the ledger's checker finds the usage repaired too.
    await sys.ledger.db.execute(`UPDATE tenant_quota SET used = 1500 WHERE tenant = ? AND resource = 'cpu'`, [TENANT]);
    for (const id of [...full, over!]) expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await sys.untilState([...full, over!], 'released');
    await sys.untilSettled();
  });
});
