// ModelDock installed into a test namespace exactly as a user installs it (a generated overlay
// of k8s/ that sets only the namespace and suffixes ClusterRoleBinding names with it, see
// scripts/testenv/install.ts), and the controller's credentials there: a kubeconfig with a
// token of system:serviceaccount:<ns>:modeldock-controller. Every controller a test runs —
// child process or in this process — uses it; the admin kubeconfig is for set-up and asserts.
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { tenantLabels } from '../../controller/tenant/namespace.ts';
import {
  adminClient,
  applyKustomization,
  CLUSTER_ROLE_BINDINGS,
  CONTROLLER_SA,
  controllerCredentials,
  writeNamespaceOverlay,
  type ControllerCredentials,
  type KubeTarget,
  type OverlayPatches,
} from '../../scripts/testenv/install.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export interface Install extends ControllerCredentials {
  /** The controller's identity, as the API server sees it. */
  user: string;
  /** A KubeConfig authenticating as the controller's ServiceAccount. */
  kc: KubeConfig;
}

const TOKEN_SECONDS = 24 * 3600;
const installs = new Map<string, Promise<Install>>();

/** Which of the stack's clusters (default: its first): its admin kubeconfig, and where install files go. */
export interface InstallTarget extends KubeTarget {
  /** A directory of the stack's own (`installs/` below it). */
  dir: string;
}
const firstCluster = (): InstallTarget => {
  const stack = inject('stack');
  return { binDir: stack.binDir, kubeconfig: stack.kubeconfig, dir: stack.runDir };
};

/**
 * Installs k8s/ into `namespace` (once per namespace, cluster and test file; `patches` only with
 * the first call) and mints the controller's token.
 */
export function installModelDock(namespace: string, patches: OverlayPatches = {}, on: InstallTarget = firstCluster()): Promise<Install> {
  const key = `${on.kubeconfig}#${namespace}`;
  let p = installs.get(key);
  if (!p) {
    p = (async () => {
      const dir = writeNamespaceOverlay(repoRoot, join(on.dir, 'installs', namespace), namespace, patches);
      await applyKustomization(on, dir);
      const creds = await controllerCredentials(on, namespace, join(dir, 'controller.kubeconfig'), TOKEN_SECONDS);
      const kc = new KubeConfig();
      kc.loadFromFile(creds.kubeconfig);
      return { ...creds, kc, user: `system:serviceaccount:${namespace}:${CONTROLLER_SA}` };
    })();
    installs.set(key, p);
    p.catch(() => installs.delete(key));
  }
  return p;
}

/**
 * Labels `namespace` as a tenant namespace of tenant `tenant` (as the controller labels the ones
 * it creates, controller/tenant/namespace.ts), so the admission policies let the controller write
 * there: for suites that drive one reconciler directly on objects in their own namespace.
 */
export async function labelAsTenantNamespace(namespace: string, tenant: string): Promise<void> {
  await adminClient(inject('stack').kubeconfig).mergePatch(paths.namespace(namespace), {
    metadata: { labels: tenantLabels(tenant, undefined) },
  });
}

/** A KubeClient acting as the controller of `namespace` (for in-process controllers). */
export async function controllerClient(namespace: string, opts: Omit<ConstructorParameters<typeof KubeClient>[0], 'kc'> = {}): Promise<KubeClient> {
  return new KubeClient({ ...opts, kc: (await installModelDock(namespace)).kc });
}

/** Deletes what a namespace deletion does not: the install's ClusterRoleBindings (its tenants' namespaces: kube.ts createNamespace). */
export async function uninstallModelDock(namespace: string, on: InstallTarget = firstCluster()): Promise<void> {
  const key = `${on.kubeconfig}#${namespace}`;
  if (!installs.has(key)) return;
  installs.delete(key);
  const admin = adminClient(on.kubeconfig);
  await Promise.all(
    CLUSTER_ROLE_BINDINGS.map((name) =>
      admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}-${namespace}`).catch(() => undefined),
    ),
  );
}
