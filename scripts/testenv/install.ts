// Installs ModelDock the way a user does — `kubectl apply --server-side -k` on k8s/ (or on a
// generated overlay of it) — and gives the controller a kubeconfig of its own: a token minted
// for the `modeldock-controller` ServiceAccount with the TokenRequest API. Used by `npm run dev`
// and the integration tests; the admin kubeconfig only sets things up.
//
// Per-namespace installs (one per test suite) must not collide on the cluster-scoped objects:
// the ClusterRoles and admission policies are identical for every install and shared (server-side
// apply of the same content is idempotent), while each ClusterRoleBinding names one namespace's
// ServiceAccount, so the overlay suffixes ClusterRoleBinding names with the namespace. Nor on the
// tenants' namespaces: each install's controller runs as its own installation (INSTANCE = its
// namespace) with tenant namespaces named `<its namespace>-<tenant>` (installEnv).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { tenantNamespace } from '../../schema/tenant-namespace.ts';

export const K8S_DIR = 'k8s';
export const CONTROLLER_SA = 'modeldock-controller';
export const BASE_NAMESPACE = 'modeldock-system';
/** The gateway's namespace as shipped (k8s/gateway). */
export const GATEWAY_NAMESPACE = 'modeldock-gateway';
export const MONITORING_NAMESPACE = 'modeldock-monitoring';
export const METRICS_SA = 'metrics-scraper';
/** ClusterRoleBindings of k8s/base/rbac.yaml and k8s/gateway: the ones a per-namespace install suffixes. */
export const CLUSTER_ROLE_BINDINGS = ['modeldock-controller', 'modeldock-metrics-auth', 'modeldock-gateway'];
export const GATEWAY_SA = 'modeldock-gateway';

/**
 * The namespace of the gateway of an install into `namespace`: `<namespace>--gw`, which no tenant
 * namespace `<namespace>-<tenant>` can be (a tenant starts with a letter or digit).
 */
export const installGatewayNamespace = (namespace: string): string => `${namespace}--gw`;

/**
 * The controller settings of an install into `namespace` (one per test suite): its own
 * installation label and tenant namespaces `<namespace>-<tenant>`, so suites sharing the cluster
 * never see each other's tenants (controller/main.ts INSTANCE, TENANT_NAMESPACE_PREFIX).
 */
export function installEnv(namespace: string): { NAMESPACE: string; INSTANCE: string; TENANT_NAMESPACE_PREFIX: string; TENANT_GATEWAY_NAMESPACE_LABELS: string } {
  return {
    NAMESPACE: namespace,
    INSTANCE: namespace,
    TENANT_NAMESPACE_PREFIX: `${namespace}-`,
    // Tenant pods admit this install's gateway only (its pods: the default TENANT_GATEWAY_POD_LABELS).
    TENANT_GATEWAY_NAMESPACE_LABELS: JSON.stringify({ 'kubernetes.io/metadata.name': installGatewayNamespace(namespace) }),
  };
}

/** The namespace the controller of an install into `namespace` (installEnv) gives `tenant`. */
export const installTenantNamespace = (namespace: string, tenant: string): string => tenantNamespace(tenant, installEnv(namespace).TENANT_NAMESPACE_PREFIX);

export interface KubeTarget {
  binDir: string;
  /** The admin kubeconfig (set-up only). */
  kubeconfig: string;
}

export async function kubectl(t: KubeTarget, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(join(t.binDir, 'kubectl'), ['--kubeconfig', t.kubeconfig, ...args], { maxBuffer: 1 << 24 });
  return stdout;
}

/** `kubectl apply --server-side -k dir` (the field manager is kubectl's, as for a user). */
export async function applyKustomization(t: KubeTarget, dir: string, extra: string[] = []): Promise<string> {
  return kubectl(t, 'apply', '--server-side', '--force-conflicts', '-k', dir, ...extra);
}

/**
 * An operator's patches of a test install, per part of its overlay: file name → the patch's
 * kustomize target (a YAML flow map, e.g. `{kind: Deployment, name: modeldock-gateway}`) and content.
 */
export type OverlayPatches = Partial<Record<'system' | 'gateway', Record<string, { target: string; content: string }>>>;

/**
 * Writes `<dir>/kustomization.yaml`: k8s/base with every namespaced object in `namespace` (and the
 * RoleBinding/ClusterRoleBinding subjects with it) and the controller Deployment's installEnv, and
 * k8s/gateway in installGatewayNamespace(namespace) with the gateway's INSTANCE and tenant prefix;
 * one replica of each;
 * ClusterRoleBindings named `<name>-<namespace>`, everything of the gateway labelled with the
 * installation (its namespace is deleted with the install's tenants: test/support/kube.ts).
 * `patches` are the operator's: written beside each part and added to its `patches:` list.
 * Changes nothing else: not RBAC rules, not admission policies, not security settings.
 */
export function writeNamespaceOverlay(repoRoot: string, dir: string, namespace: string, patches: OverlayPatches = {}): string {
  const part = (name: 'system' | 'gateway', resources: string, ns: string, envTarget: string, env: Array<[string, string]>, more = '') => {
    const sub = join(dir, name);
    mkdirSync(sub, { recursive: true });
    const extra = Object.entries(patches[name] ?? {}).map(([file, { target, content }]) => {
      writeFileSync(join(sub, file), content);
      return `{path: ${file}, target: ${target}}`;
    });
    writeFileSync(
      join(sub, 'suffix-cluster-bindings.yaml'),
      `apiVersion: builtin
kind: PrefixSuffixTransformer
metadata:
  name: suffix-cluster-bindings
suffix: -${namespace}
fieldSpecs:
- kind: ClusterRoleBinding
  path: metadata/name
`,
    );
    writeFileSync(
      join(sub, 'kustomization.yaml'),
      `# GENERATED by scripts/testenv/install.ts: ModelDock installed into namespace ${namespace}.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${ns}
resources:
- ${relative(sub, join(repoRoot, K8S_DIR, resources))}
transformers:
- suffix-cluster-bindings.yaml
${more}patches:
- {path: install-env.yaml, target: {kind: Deployment, name: ${envTarget}}}
${extra.map((p) => `- ${p}\n`).join('')}`,
    );
    writeFileSync(
      join(sub, 'install-env.yaml'),
      `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${envTarget}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: ${name === 'system' ? 'controller' : 'gateway'}
        env:
${env.map(([k, v]) => `        - name: ${k}\n          value: ${JSON.stringify(v)}`).join('\n')}
`,
    );
  };
  const env = installEnv(namespace);
  part('system', 'base', namespace, 'modeldock-controller', Object.entries(env).filter(([k]) => k !== 'NAMESPACE')); // the Deployment reads its own namespace
  part('gateway', 'gateway', installGatewayNamespace(namespace), 'modeldock-gateway', [['INSTANCE', env.INSTANCE], ['TENANT_NAMESPACE_PREFIX', env.TENANT_NAMESPACE_PREFIX]],
    `labels:\n- pairs: {modeldock.io/instance: ${JSON.stringify(namespace)}}\n`);
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `# GENERATED by scripts/testenv/install.ts: ModelDock installed into namespace ${namespace} (gateway: ${installGatewayNamespace(namespace)}).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- system
- gateway
`,
  );
  return dir;
}

export function adminClient(kubeconfig: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return new KubeClient({ kc });
}

/** A bound ServiceAccount token from the TokenRequest API (audience: the API server's). */
export async function mintToken(admin: KubeClient, namespace: string, serviceAccount: string, expirationSeconds: number): Promise<string> {
  const res = await admin.create<{ status: { token: string } }>(`/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds },
  });
  return res.status.token;
}

/** A kubeconfig for `token`, on the same cluster (server, CA) as the admin kubeconfig. */
export function tokenKubeconfig(adminKubeconfig: string, user: string, token: string, namespace: string): string {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${adminKubeconfig} has no current cluster`);
  return `apiVersion: v1
kind: Config
clusters:
- name: ${cluster.name}
  cluster:
    server: ${cluster.server}
    certificate-authority: ${cluster.caFile ?? ''}
users:
- name: ${user}
  user:
    token: ${token}
contexts:
- name: ${user}
  context:
    cluster: ${cluster.name}
    user: ${user}
    namespace: ${namespace}
current-context: ${user}
`;
}

export interface ControllerCredentials {
  namespace: string;
  /** Path of a kubeconfig authenticating as system:serviceaccount:<namespace>:modeldock-controller. */
  kubeconfig: string;
  token: string;
}

/** Mints a token for the controller's ServiceAccount in `namespace` and writes its kubeconfig to `file`. */
export async function controllerCredentials(t: KubeTarget, namespace: string, file: string, expirationSeconds: number): Promise<ControllerCredentials> {
  const token = await mintToken(adminClient(t.kubeconfig), namespace, CONTROLLER_SA, expirationSeconds);
  writeFileSync(file, tokenKubeconfig(t.kubeconfig, `system:serviceaccount:${namespace}:${CONTROLLER_SA}`, token, namespace), { mode: 0o600 });
  return { namespace, kubeconfig: file, token };
}

/** The ledger database as the Deployment reads it: Secret modeldock-database, key url (kubectl create secret generic …). */
export async function createDatabaseSecret(t: KubeTarget, namespace: string, url: string): Promise<void> {
  await adminClient(t.kubeconfig).create(`/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'modeldock-database' },
    type: 'Opaque',
    stringData: { url },
  });
}

/**
 * k8s/ as shipped (namespace modeldock-system) and the monitoring example k8s/monitoring; returns
 * a token of the monitoring ServiceAccount, which may read the controller's /metrics.
 */
export async function installBase(t: KubeTarget, repoRoot: string, expirationSeconds: number): Promise<{ metricsToken: string }> {
  await applyKustomization(t, join(repoRoot, K8S_DIR));
  await applyKustomization(t, join(repoRoot, K8S_DIR, 'monitoring'));
  await kubectl(t, 'wait', '--for=condition=Established', '--timeout=60s', 'crd/modelservices.modeldock.io');
  const metricsToken = await mintToken(adminClient(t.kubeconfig), MONITORING_NAMESPACE, METRICS_SA, expirationSeconds);
  return { metricsToken };
}
