// The controller's credentials in a test namespace: the ServiceAccount, Role and RoleBinding of
// k8s/rbac.yaml (namespace rewritten), and a kubeconfig with a token minted for that
// ServiceAccount through the TokenRequest API. Nothing the controller does uses admin credentials.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { kubeConfig } from './kube.ts';

export const CONTROLLER_SA = 'modeldock-controller';

interface Rbac extends KubernetesObject {
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** Applies k8s/rbac.yaml's namespaced objects to `namespace`; returns a kubeconfig file for the ServiceAccount. */
export async function serviceAccountKubeconfig(namespace: string, seconds = 3600): Promise<string> {
  const admin = kubeConfig();
  const objects = loadAllYaml(readFileSync(join(repoRoot, 'k8s/rbac.yaml'), 'utf8')) as Rbac[];
  const api = KubernetesObjectApi.makeApiClient(admin);
  for (const o of objects) {
    if (!o.metadata?.namespace) continue; // cluster-scoped objects are the installer's, not per test
    o.metadata.namespace = namespace;
    for (const s of o.subjects ?? []) if (s.kind === 'ServiceAccount') s.namespace = namespace;
    await api.create(o);
  }
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: CONTROLLER_SA,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: seconds } },
  });
  const cluster = admin.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: cluster.server, caData: cluster.caData, caFile: cluster.caFile }],
    users: [{ name: CONTROLLER_SA, token: token.status!.token }],
    contexts: [{ name: 'controller', cluster: 'local', user: CONTROLLER_SA, namespace }],
    currentContext: 'controller',
  });
  const file = join(inject('stack').runDir, `controller-${namespace}.kubeconfig`);
  writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
  return file;
}
