// Pod Security `restricted` on a namespace ModelDock is installed into (k8s/base/namespace.yaml's
// labels): the API server admits every pod the controller generates — through the real chain
// Deployment → ReplicaSet (kube-controller-manager) → Pod — and the controller's own pods, and
// refuses a privileged pod in the same namespace. The namespace's LimitRange and ResourceQuota
// (k8s/base/limits.yaml) refuse a pod without limits, while ModelDock's pods — requests = limits =
// what the ledger charges per replica — are admitted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { REPLICA_RESOURCES, RESOURCE_UNITS, totalAmounts } from '../../schema/model-service.ts';
import { modelServiceSpecSchema } from '../../schema/model-service.ts';
import type { Pod } from '../../controller/modelservice/types.ts';
import { makeModelService } from '../support/builders.ts';
import { installModelDock } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { ensureCrd, ops, startInProcessOperator, type InProcessOperator } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
const admin = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
let op: InProcessOperator;

beforeAll(async () => {
  ns = await createNamespace(core, 'psa');
  await installModelDock(ns.name);
  await ensureCrd(admin, ns.name);
  op = await startInProcessOperator(ns.name);
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
  it('the namespace enforces restricted (labels of k8s/base/namespace.yaml, applied by the install)', async () => {
    const got = await admin.get<{ metadata: { labels: Record<string, string> } }>(`/api/v1/namespaces/${ns.name}`);
    expect(got.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
  });

  it('admits every pod the controller generates (tag and digest images, env, args, GPUs, replicas) and the controller pod', async () => {
    const k = ops(admin, ns.name);
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
    const rss = await admin.list<ReplicaSet>(`/apis/apps/v1/namespaces/${ns.name}/replicasets`);
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

  it('refuses a pod without limits (LimitRange Pod max, ResourceQuota limits) and one above the per-pod maximum', async () => {
    await expect(admin.create(paths.pods(ns.name), compliant('no-limits'))).rejects.toMatchObject({ code: 403, message: expect.stringMatching(/No limit is specified|must specify limits/) });
    await expect(
      admin.create(paths.pods(ns.name), compliant('cpu-only', { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1' } })),
    ).rejects.toMatchObject({ code: 403 });
    await expect(
      admin.create(paths.pods(ns.name), compliant('huge', { requests: { cpu: '32', memory: '1Gi' }, limits: { cpu: '32', memory: '1Gi' } })),
    ).rejects.toMatchObject({ code: 403, message: expect.stringContaining('maximum cpu usage per Pod is 16') });
    // The same pod with limits inside the bounds is admitted (the refusals above are about limits, not Pod Security).
    const ok = await admin.create<Pod>(paths.pods(ns.name), compliant('bounded', { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } }));
    expect(ok.metadata.name).toBe('bounded');
    await admin.delete(`${paths.pods(ns.name)}/bounded`);
  });

  it('refuses a privileged pod (and a root one) in the same namespace', async () => {
    const privileged = {
      metadata: { name: 'privileged' },
      spec: { containers: [{ name: 'c', image: 'example.invalid/x:1', securityContext: { privileged: true }, resources: LIMITS }] },
    };
    await expect(admin.create(paths.pods(ns.name), privileged)).rejects.toMatchObject({ code: 403, message: expect.stringContaining('violates PodSecurity "restricted') });
    const root = {
      metadata: { name: 'root' },
      spec: {
        securityContext: { runAsNonRoot: false, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'c', image: 'example.invalid/x:1', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }, resources: LIMITS }],
      },
    };
    await expect(admin.create(paths.pods(ns.name), root)).rejects.toMatchObject({ code: 403, message: expect.stringContaining('runAsNonRoot != true') });
  });
});
