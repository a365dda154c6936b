// The shipped manifests against the real API server: a server-side dry run of every
// kustomization (k8s/, k8s/monitoring, each k8s/overlays/*), every pod template in what it
// renders passing scripts/check/pod-templates.ts (the kubelet's checks, as KWOK runs none), what
// the production overlay changes, and the controller's NetworkPolicy as the API server stores it
// (validated here; policies are enforced on the real node only: test/node/network-policy.test.ts).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { kubectl } from '../../scripts/testenv/install.ts';
import { checkObjects } from '../../scripts/check/pod-templates.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { allowsAnyRegistry, parseRegistryList } from '../../schema/policy.ts';

const overlays = readdirSync(join(repoRoot, 'k8s/overlays')).map((d) => `k8s/overlays/${d}`);
const kustomizations = ['k8s', 'k8s/monitoring', ...overlays];

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

const rendered = new Map<string, Promise<Obj[]>>();
/** What the API server would store for `dir`, without storing it (once per kustomization). */
function dryRun(dir: string): Promise<Obj[]> {
  let objs = rendered.get(dir);
  if (!objs) {
    objs = kubectl(inject('stack'), 'apply', '--dry-run=server', '--server-side', '--force-conflicts', '-k', join(repoRoot, dir), '-o', 'json').then((out) => {
      const parsed = JSON.parse(out) as { kind: string; items?: Obj[] } & Obj;
      return parsed.kind === 'List' ? (parsed.items ?? []) : [parsed];
    });
    rendered.set(dir, objs);
  }
  return objs;
}

const find = (objs: Obj[], kind: string, name: string): Obj => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind}/${name} not rendered`);
  return o;
};

describe('kubectl apply --dry-run=server -k', () => {
  it('finds the overlays', () => expect(overlays).toContain('k8s/overlays/production'));

  it.each(kustomizations)('%s is accepted by the API server', async (dir) => {
    const objs = await dryRun(dir);
    expect(objs.length).toBeGreaterThan(0);
  });

  it.each(kustomizations)('%s: every pod template passes the checks a kubelet would make', async (dir) => {
    expect(checkObjects(`kubectl apply --dry-run=server -k ${dir}`, await dryRun(dir))).toEqual([]);
  });

  it('the pod templates checked include the controller Deployment (the check did not pass for want of templates)', async () => {
    const kinds = (await Promise.all(kustomizations.map(dryRun))).flat().map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).toContain('Deployment/modeldock-controller');
    expect(kinds).toContain('Deployment/modeldock-gateway');
  });

  it('production: images by digest, 2 replicas, topology spread, requests and limits, a PodDisruptionBudget of minAvailable 1', async () => {
    const objs = await dryRun('k8s/overlays/production');
    const dep = find(objs, 'Deployment', 'modeldock-controller') as Obj & {
      spec: { replicas: number; template: { spec: { topologySpreadConstraints?: Array<{ topologyKey: string }>; containers: Array<{ image: string; resources: { requests: object; limits: object } }> } } };
    };
    expect(dep.spec.replicas).toBe(2);
    const pod = dep.spec.template.spec;
    expect(pod.containers.length).toBeGreaterThan(0);
    for (const c of pod.containers) {
      expect(c.image).toMatch(/@sha256:[a-f0-9]{64}$/);
      expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(c.resources.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    }
    expect(pod.topologySpreadConstraints?.map((t) => t.topologyKey)).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
    for (const name of ['modeldock-controller', 'modeldock-gateway']) {
      const pdb = find(objs, 'PodDisruptionBudget', name) as Obj & { spec: { minAvailable: number; selector: unknown } };
      expect(pdb.spec.minAvailable).toBe(1);
      expect(pdb.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/name': name } });
    }
    const gateway = find(objs, 'Deployment', 'modeldock-gateway') as Obj & { spec: { template: { spec: { containers: Array<{ image: string }> } } } };
    expect(gateway.spec.template.spec.containers[0]!.image).toMatch(/@sha256:[a-f0-9]{64}$/);
  });

  it('the controller\'s image policy: a list in the base (ModelDock\'s own images) and in production (its placeholder), never empty or *', async () => {
    const registries = async (dir: string) => {
      const dep = find(await dryRun(dir), 'Deployment', 'modeldock-controller') as Obj & { spec: { template: { spec: { containers: Array<{ env?: Array<{ name: string; value?: string }> }> } } } };
      const values = (dep.spec.template.spec.containers[0]!.env ?? []).filter((e) => e.name === 'ALLOWED_IMAGE_REGISTRIES').map((e) => e.value);
      expect(values, dir).toHaveLength(1);
      const rules = parseRegistryList(values[0]);
      expect(allowsAnyRegistry(rules), dir).toBe(false);
      return rules;
    };
    expect(await registries('k8s')).toEqual([{ host: 'docker.io', pathPrefix: 'modeldock' }]);
    expect(await registries('k8s/overlays/production')).toEqual([{ host: 'registry.example.com', pathPrefix: 'models' }]);
  });

  it('NetworkPolicy: the controller takes only the metrics port from the monitoring namespace, the gateway inference from anywhere and metrics from monitoring; no tenant policy ships (the controller writes them per tenant namespace)', async () => {
    const objs = await dryRun('k8s');
    const ctl = find(objs, 'NetworkPolicy', 'modeldock-controller');
    expect(ctl.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'modeldock-controller' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'modeldock.io/monitoring': 'true' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] }],
    });
    expect(find(objs, 'NetworkPolicy', 'modeldock-gateway').spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'modeldock-gateway' } },
      policyTypes: ['Ingress'],
      ingress: [
        { ports: [{ port: 'http', protocol: 'TCP' }] },
        { from: [{ namespaceSelector: { matchLabels: { 'modeldock.io/monitoring': 'true' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] },
      ],
    });
    expect(objs.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name).sort()).toEqual(['modeldock-controller', 'modeldock-gateway']);
    // The gateway's namespace carries the label tenant namespaces admit (controller/tenant/network-settings.ts defaults).
    const gatewayNs = find(objs, 'Namespace', 'modeldock-gateway');
    expect((gatewayNs.metadata as { labels?: Record<string, string> }).labels).toMatchObject({ 'modeldock.io/gateway': 'true', 'pod-security.kubernetes.io/enforce': 'restricted' });
    const monitoring = find(await dryRun('k8s/monitoring'), 'Namespace', 'modeldock-monitoring');
    expect((monitoring.metadata as { labels?: Record<string, string> }).labels).toMatchObject({ 'modeldock.io/monitoring': 'true' });
  });

  it('the gateway may list and watch EndpointSlices, nothing else; its ServiceAccount is bound to exactly that', async () => {
    const objs = await dryRun('k8s');
    const role = find(objs, 'ClusterRole', 'modeldock-gateway') as Obj & { rules: unknown[] };
    expect(role.rules).toEqual([{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] }]);
    const binding = find(objs, 'ClusterRoleBinding', 'modeldock-gateway') as Obj & { roleRef: unknown; subjects: unknown[] };
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'modeldock-gateway' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'modeldock-gateway', namespace: 'modeldock-gateway' }]);
  });

  it('the controller Deployment reads DATABASE_URL from the Secret modeldock-database and runs as a numeric non-root user', async () => {
    const dep = find(await dryRun('k8s'), 'Deployment', 'modeldock-controller') as Obj & {
      spec: { template: { spec: { securityContext: Record<string, unknown>; containers: Array<{ env: Array<{ name: string; valueFrom?: unknown }> }> } } };
    };
    const env = dep.spec.template.spec.containers[0]!.env;
    expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'modeldock-database', key: 'url' } });
    expect(dep.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001 });
  });
});
