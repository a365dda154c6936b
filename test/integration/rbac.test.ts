// The controller's RBAC against the real API server: k8s/base/rbac.yaml grants exactly the cells of
// k8s/base/rbac-matrix.json (every verb × resource the controller's code uses) — a Role in its own
// namespace for the lease, a ClusterRole for the tenants' namespaces, a ClusterRole for /metrics
// reviews — every cell is allowed for system:serviceaccount:<ns>:modeldock-controller
// (SubjectAccessReview), and the things it must never do are denied: read Secrets, create Pods
// directly, delete namespaces, change RBAC, CRDs or admission policies. RBAC cannot name
// namespaces that do not exist yet, so the ClusterRole's writes are confined to tenant namespaces
// by ValidatingAdmissionPolicies: shown with the ServiceAccount's own token, for real.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { tenantNamespaceObject } from '../../controller/tenant/namespace.ts';
import { LABELS } from '../../schema/model-service.ts';
import { installModelDock, type Install } from '../support/install.ts';
import { installTenantNamespace } from '../../scripts/testenv/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { allowedCells, cellsOfRules, rbacMatrix, splitResource } from '../support/rbac-matrix.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
const admin = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
let other: { name: string; remove(): Promise<void> };
let install: Install;
let sa: KubeClient;
/** A tenant namespace as the controller makes it (created here with the controller's token). */
let tenantNs: string;

beforeAll(async () => {
  [ns, other] = await Promise.all([createNamespace(core, 'rbac'), createNamespace(core, 'rbac-other')]);
  install = await installModelDock(ns.name);
  sa = new KubeClient({ kc: install.kc });
  tenantNs = installTenantNamespace(ns.name, 'acme');
  // The admission policies are new objects: the API server enforces them within a moment.
  await waitFor('the admission policies to be enforced', async () => {
    try {
      await sa.create(paths.namespaces(), { metadata: { name: `${ns.name}-probe` } });
      await admin.delete(paths.namespace(`${ns.name}-probe`));
      return undefined;
    } catch (err) {
      return (err as { code?: number }).code === 403 ? true : undefined;
    }
  }, { timeoutMs: 30_000 });
  await sa.create(paths.namespaces(), tenantNamespaceObject(tenantNs, 'acme', ns.name));
});
afterAll(async () => {
  await ns?.remove(); // and its tenant namespaces (labelled with it as their installation)
  await other?.remove();
});

interface Attrs {
  namespace?: string;
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
}

/** Asks the API server whether the controller's ServiceAccount may do `attrs` (RBAC only: admission policies are not part of the answer). */
async function allowed(attrs: Attrs): Promise<boolean> {
  const res = await admin.create<{ status: { allowed: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: install.user,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns.name}`, 'system:authenticated'],
      resourceAttributes: attrs,
    },
  });
  return res.status.allowed;
}

type Rules = { rules: Parameters<typeof cellsOfRules>[0] };
const clusterRoleBinding = (name: string) =>
  admin.get<{ subjects: Array<{ kind: string; name: string; namespace: string }> }>(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}-${ns.name}`);

describe('the controller ServiceAccount RBAC', () => {
  it('k8s/base/rbac.yaml grants exactly the matrix: the Role its own cells, the ClusterRoles the tenant and review cells', async () => {
    const role = await admin.get<Rules>(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns.name}/roles/modeldock-controller`);
    expect(cellsOfRules(role.rules)).toEqual(allowedCells('own'));
    const tenants = await admin.get<Rules>('/apis/rbac.authorization.k8s.io/v1/clusterroles/modeldock-controller');
    expect(cellsOfRules(tenants.rules)).toEqual(allowedCells('tenants'));
    const auth = await admin.get<Rules>('/apis/rbac.authorization.k8s.io/v1/clusterroles/modeldock-metrics-auth');
    expect(cellsOfRules(auth.rules)).toEqual(allowedCells('cluster'));
    // The bindings of this install name this namespace's ServiceAccount (suffixed per namespace).
    for (const name of ['modeldock-controller', 'modeldock-metrics-auth']) {
      expect((await clusterRoleBinding(name)).subjects).toEqual([{ kind: 'ServiceAccount', name: rbacMatrix.serviceAccount, namespace: ns.name }]);
    }
  });

  const own = rbacMatrix.own.flatMap((r) => Object.keys(r.verbs).map((verb) => [`${verb} ${r.apiGroup || 'core'}/${r.resource}`, r, verb] as const));
  it.each(own)('allowed in its own namespace: %s', async (_name, row, verb) => {
    expect(await allowed({ namespace: ns.name, group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(true);
  });

  const tenants = rbacMatrix.tenants.flatMap((r) => Object.keys(r.verbs).map((verb) => [`${verb} ${r.apiGroup || 'core'}/${r.resource}`, r, verb] as const));
  it.each(tenants)('allowed in a tenant namespace: %s', async (_name, row, verb) => {
    const namespace = row.resource === 'namespaces' ? undefined : tenantNs;
    expect(await allowed({ namespace, group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(true);
  });

  const cluster = rbacMatrix.cluster.flatMap((r) => Object.keys(r.verbs).map((verb) => [`${verb} ${r.apiGroup}/${r.resource}`, r, verb] as const));
  it.each(cluster)('allowed cluster-wide: %s', async (_name, row, verb) => {
    expect(await allowed({ group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(true);
  });

  const denied = rbacMatrix.denied.flatMap((r) => r.verbs.map((verb) => [`${verb} ${r.apiGroup || 'core'}/${r.resource} (${r.namespace}: ${r.why})`, r, verb] as const));
  it.each(denied)('denied: %s', async (_name, row, verb) => {
    const namespace = { own: ns.name, tenant: tenantNs, other: other.name, cluster: undefined }[row.namespace];
    expect(await allowed({ namespace, group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(false);
  });

  it('the ServiceAccount token really is refused what RBAC denies (a Secret read, a Pod create) and allowed what it needs', async () => {
    await expect(sa.get(`/api/v1/namespaces/${tenantNs}/secrets`)).rejects.toMatchObject({ code: 403 });
    await expect(sa.get(`/api/v1/namespaces/${ns.name}/secrets`)).rejects.toMatchObject({ code: 403 });
    await expect(
      sa.create(`/api/v1/namespaces/${tenantNs}/pods`, { metadata: { name: 'direct' }, spec: { containers: [{ name: 'c', image: 'x/y:1' }] } }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(sa.list('/apis/apps/v1/deployments', { labelSelector: `${LABELS.managedBy}=modeldock` })).resolves.toMatchObject({ items: expect.any(Array) });
  });
});

describe('the admission policies confine the controller’s writes to tenant namespaces', () => {
  const service = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }] } });

  it('a write in a tenant namespace is admitted; the same write in its own, another or a system namespace is refused by the policy', async () => {
    await expect(sa.create(paths.services(tenantNs), service('allowed'))).resolves.toMatchObject({ metadata: { name: 'allowed' } });
    for (const where of [ns.name, other.name, 'kube-system', 'default']) {
      await expect(sa.create(paths.services(where), service('refused')), where).rejects.toMatchObject({
        code: 403,
        message: expect.stringContaining('writes only in tenant namespaces'),
      });
    }
    // …and so is a delete there (RBAC allows it cluster-wide; the policy does not).
    await admin.create(paths.services(other.name), service('bystander'));
    await expect(sa.delete(`${paths.services(other.name)}/bystander`)).rejects.toMatchObject({ code: 403 });
    expect(await admin.getOrUndefined(`${paths.services(other.name)}/bystander`)).toBeDefined();
  });

  it('a namespace it creates must be a tenant namespace with Pod Security restricted; it cannot loosen one, nor take over one that is not ModelDock’s', async () => {
    const bare = { metadata: { name: `${ns.name}-bare` } };
    await expect(sa.create(paths.namespaces(), bare)).rejects.toMatchObject({ code: 403 });
    const loose = tenantNamespaceObject(`${ns.name}-loose`, 'globex', ns.name);
    loose.metadata.labels = { ...loose.metadata.labels, 'pod-security.kubernetes.io/enforce': 'privileged' };
    await expect(sa.create(paths.namespaces(), loose)).rejects.toMatchObject({ code: 403 });
    await expect(sa.mergePatch(paths.namespace(tenantNs), { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } })).rejects.toMatchObject({ code: 403 });
    // A namespace that is not ModelDock's cannot be made one by labelling it.
    await expect(
      sa.mergePatch(paths.namespace(other.name), { metadata: { labels: tenantNamespaceObject(other.name, 'acme', ns.name).metadata.labels } }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(sa.delete(paths.namespace(tenantNs))).rejects.toMatchObject({ code: 403 }); // RBAC: never deletes one
    expect((await admin.get<{ metadata: { labels: Record<string, string> } }>(paths.namespace(tenantNs))).metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });
});
