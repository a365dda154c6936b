// Pod Security `restricted` on a tenant namespace as the controller creates it (its labels,
// controller/tenant/namespace.ts, written with the controller's own token) and on the namespace
// ModelDock is installed into (k8s/base/namespace.yaml): the API server admits every pod the
// controller generates — through the real chain Deployment → ReplicaSet (kube-controller-manager)
// → Pod — and the controller's own pods, and refuses a privileged pod in the tenant's namespace.
// The tenant namespace's ResourceQuota (controller/tenant/quota.ts) refuses a pod without limits
// and one beyond the tenant's quota, while ModelDock's pods — requests = limits = what the ledger
// charges per replica — are admitted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { REPLICA_RESOURCES, RESOURCE_UNITS, totalAmounts } from '../../schema/model-service.ts';
import { modelServiceSpecSchema } from '../../schema/model-service.ts';
import type { Pod } from '../../controller/modelservice/types.ts';
import { makeModelService } from '../support/builders.ts';
import { controllerClient, installModelDock } from '../support/install.ts';
import { installTenantNamespace } from '../../scripts/testenv/install.ts';
import { tenantNamespaceObject } from '../../controller/tenant/namespace.ts';
import { TENANT_QUOTA_NAME, tenantResourceQuota, type ResourceQuota } from '../../controller/tenant/quota.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { ensureCrd, ops, startInProcessOperator, type InProcessOperator } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
const admin = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
let op: InProcessOperator;
/** The tenant's namespace, as the controller makes it (its installation: ns). */
let tenantNs: string;

beforeAll(async () => {
  ns = await createNamespace(core, 'psa');
  await installModelDock(ns.name);
  await ensureCrd(admin, ns.name);
  op = await startInProcessOperator(ns.name);
  tenantNs = installTenantNamespace(ns.name, 'acme');
  const sa = await controllerClient(ns.name);
  await sa.create(paths.namespaces(), tenantNamespaceObject(tenantNs, 'acme', ns.name));
  const quota = tenantResourceQuota(tenantNs, 'acme', { cpu: 4000, memory: 8192, 'nvidia.com/gpu': 1, modelservices: 10 }, { maxReplicas: 16, instance: ns.name });
  await sa.create(paths.resourceQuotas(tenantNs), quota);
  await waitFor('kube-controller-manager to compute the quota', async () => ((await admin.get<ResourceQuota>(`${paths.resourceQuotas(tenantNs)}/${TENANT_QUOTA_NAME}`)).status?.hard?.pods ? true : undefined));
});
afterAll(async () => {
  await op?.stop();
  await ns?.remove();
});

/** Limits inside the namespace's bounds: the pods below are refused for Pod Security alone. */
const LIMITS = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } };

interface ReplicaSet {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { replicas?: number; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

describe('Pod Security restricted', () => {
  it("both namespaces enforce restricted: the tenant's (as the controller labels it) and ModelDock's (k8s/base/namespace.yaml, applied by the install)", async () => {
    for (const name of [tenantNs, ns.name]) {
      const got = await admin.get<{ metadata: { labels: Record<string, string> } }>(`/api/v1/namespaces/${name}`);
      expect(got.metadata.labels, name).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
    }
  });

  it('admits every pod the controller generates (tag and digest images, env, args, GPUs, replicas) and the controller pod', async () => {
    const k = ops(admin, tenantNs, ns.name);
    const variants = [
      makeModelService('plain').obj(),
      makeModelService('digest').image(`example.invalid/modeldock/model@sha256:${'b'.repeat(64)}`).replicas(2).obj(),
      makeModelService('rich').env('MODEL', 'tiny').resources({ cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '1' }).port(9000).obj(),
    ];
    for (const v of variants) await k.create(v);
    for (const v of variants) await k.waitPhase(v.metadata.name, 'Running', 1, 60_000);
    for (const v of variants) {
      const pods = await k.pods(v.metadata.name);
      expect(pods).toHaveLength(v.spec.replicas);
    }
    // No ReplicaSet of ours was refused a pod (FailedCreate is how a PodSecurity refusal shows).
    const rss = await admin.list<ReplicaSet>(`/apis/apps/v1/namespaces/${tenantNs}/replicasets`);
    expect(rss.items.length).toBeGreaterThanOrEqual(variants.length);
    for (const rs of rss.items) expect(rs.status?.conditions?.find((c) => c.type === 'ReplicaFailure')).toBeUndefined();
    // The installed controller Deployment (k8s/base/controller.yaml) got its pod admitted too.
    const ctlPods = await waitFor('the controller Deployment pod', async () => {
      const l = await admin.list<Pod>(paths.pods(ns.name), { labelSelector: 'app.kubernetes.io/name=modeldock-controller' });
      return l.items.length > 0 ? l.items : undefined;
    });
    expect(ctlPods.length).toBeGreaterThan(0);
    // Every pod asks for exactly what its ModelService is charged: Σ requests = the charged amounts, limits = requests.
    for (const v of variants) {
      const pods = await k.pods(v.metadata.name);
      expect(pods).toHaveLength(v.spec.replicas); // else every sum below is a vacuous 0
      const charged = totalAmounts(modelServiceSpecSchema.parse(v.spec));
      for (const r of REPLICA_RESOURCES) {
        let sum = 0;
        for (const p of pods) {
          const res = (p.spec as { containers: Array<{ resources: { requests?: Record<string, string>; limits?: Record<string, string> } }> }).containers[0]!.resources;
          expect(res.limits, `${v.metadata.name} limits`).toEqual(res.requests);
          sum += res.requests?.[r] ? RESOURCE_UNITS[r].parse(res.requests[r]) : 0;
        }
        expect(sum, `${v.metadata.name} ${r}`).toBe(charged[r]);
      }
    }
  });

  const compliant = (name: string, resources?: object) => ({
    metadata: { name },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'c', image: 'example.invalid/x:1', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }, ...(resources ? { resources } : {}) }],
    },
  });

  it("the tenant's ResourceQuota refuses a pod without limits and one beyond the tenant's quota", async () => {
    await expect(admin.create(paths.pods(tenantNs), compliant('no-limits'))).rejects.toMatchObject({ code: 403, message: expect.stringContaining('must specify limits') });
    await expect(
      admin.create(paths.pods(tenantNs), compliant('cpu-only', { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1' } })),
    ).rejects.toMatchObject({ code: 403, message: expect.stringContaining('must specify limits.memory') });
    await expect(
      admin.create(paths.pods(tenantNs), compliant('huge', { requests: { cpu: '32', memory: '1Gi' }, limits: { cpu: '32', memory: '1Gi' } })),
    ).rejects.toMatchObject({ code: 403, message: expect.stringContaining(`exceeded quota: ${TENANT_QUOTA_NAME}`) });
    // The same pod with limits inside the quota is admitted (the refusals above are about limits, not Pod Security).
    const ok = await admin.create<Pod>(paths.pods(tenantNs), compliant('bounded', { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } }));
    expect(ok.metadata.name).toBe('bounded');
    await admin.delete(`${paths.pods(tenantNs)}/bounded`);
  });

  it("refuses a privileged pod (and a root one) in the tenant's namespace", async () => {
    const privileged = {
      metadata: { name: 'privileged' },
      spec: { containers: [{ name: 'c', image: 'example.invalid/x:1', securityContext: { privileged: true }, resources: LIMITS }] },
    };
    await expect(admin.create(paths.pods(tenantNs), privileged)).rejects.toMatchObject({ code: 403, message: expect.stringContaining('violates PodSecurity "restricted') });
    const root = {
      metadata: { name: 'root' },
      spec: {
        securityContext: { runAsNonRoot: false, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'c', image: 'example.invalid/x:1', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }, resources: LIMITS }],
      },
    };
    await expect(admin.create(paths.pods(tenantNs), root)).rejects.toMatchObject({ code: 403, message: expect.stringContaining('runAsNonRoot != true') });
  });
});
