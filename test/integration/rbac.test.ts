// The controller's RBAC against the real API server: k8s/base/rbac.yaml grants exactly the cells of
// k8s/base/rbac-matrix.json (every verb × resource the controller's code uses), every cell is allowed
// for system:serviceaccount:<ns>:modeldock-controller (SubjectAccessReview), and the things it
// must never do are denied: read Secrets, write outside its namespace, change CRDs, create Pods
// directly, create Roles/RoleBindings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { installModelDock, type Install } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { allowedCells, cellsOfRules, rbacMatrix, splitResource } from '../support/rbac-matrix.ts';

const { kc, core } = kubeClients();
const admin = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
let other: { name: string; remove(): Promise<void> };
let install: Install;

beforeAll(async () => {
  [ns, other] = await Promise.all([createNamespace(core, 'rbac'), createNamespace(core, 'rbac-other')]);
  install = await installModelDock(ns.name);
});
afterAll(async () => {
  await ns?.remove();
  await other?.remove();
});

interface Attrs {
  namespace?: string;
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
}

/** Asks the API server whether the controller's ServiceAccount may do `attrs`. */
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

describe('the controller ServiceAccount RBAC', () => {
  it('k8s/base/rbac.yaml grants exactly the matrix: the Role its namespaced cells, the ClusterRole its cluster cells', async () => {
    const role = await admin.get<{ rules: Parameters<typeof cellsOfRules>[0] }>(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns.name}/roles/modeldock-controller`);
    expect(cellsOfRules(role.rules)).toEqual(allowedCells('namespaced'));
    const auth = await admin.get<{ rules: Parameters<typeof cellsOfRules>[0] }>('/apis/rbac.authorization.k8s.io/v1/clusterroles/modeldock-metrics-auth');
    expect(cellsOfRules(auth.rules)).toEqual(allowedCells('cluster'));
    // The binding of this install names this namespace's ServiceAccount (suffixed per namespace).
    const crb = await admin.get<{ subjects: Array<{ kind: string; name: string; namespace: string }> }>(
      `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/modeldock-metrics-auth-${ns.name}`,
    );
    expect(crb.subjects).toEqual([{ kind: 'ServiceAccount', name: rbacMatrix.serviceAccount, namespace: ns.name }]);
  });

  const namespaced = rbacMatrix.namespaced.flatMap((r) => Object.keys(r.verbs).map((verb) => [`${verb} ${r.apiGroup || 'core'}/${r.resource}`, r, verb] as const));
  it.each(namespaced)('allowed in its namespace: %s', async (_name, row, verb) => {
    expect(await allowed({ namespace: ns.name, group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(true);
  });

  const cluster = rbacMatrix.cluster.flatMap((r) => Object.keys(r.verbs).map((verb) => [`${verb} ${r.apiGroup}/${r.resource}`, r, verb] as const));
  it.each(cluster)('allowed cluster-wide: %s', async (_name, row, verb) => {
    expect(await allowed({ group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(true);
  });

  const denied = rbacMatrix.denied.flatMap((r) => r.verbs.map((verb) => [`${verb} ${r.apiGroup || 'core'}/${r.resource} (${r.namespace}: ${r.why})`, r, verb] as const));
  it.each(denied)('denied: %s', async (_name, row, verb) => {
    const namespace = row.namespace === 'own' ? ns.name : row.namespace === 'other' ? other.name : undefined;
    expect(await allowed({ namespace, group: row.apiGroup, ...splitResource(row.resource), verb })).toBe(false);
  });

  it('the ServiceAccount token really is refused what RBAC denies (a Secret read, a Pod create)', async () => {
    const sa = new KubeClient({ kc: install.kc });
    await expect(sa.get(`/api/v1/namespaces/${ns.name}/secrets`)).rejects.toMatchObject({ code: 403 });
    await expect(
      sa.create(`/api/v1/namespaces/${ns.name}/pods`, { metadata: { name: 'direct' }, spec: { containers: [{ name: 'c', image: 'x/y:1' }] } }),
    ).rejects.toMatchObject({ code: 403 });
    // …and allowed what it needs (a list it makes at start).
    await expect(sa.list(`/apis/apps/v1/namespaces/${ns.name}/deployments`)).resolves.toMatchObject({ items: expect.any(Array) });
  });
});
