// Kubernetes clients for tests, built from the local stack's kubeconfig, and a namespace
// per test file so suites never see each other's objects.
import { randomBytes } from 'node:crypto';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, ApiextensionsV1Api, KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { uninstallModelDock } from './install.ts';
import { LABELS } from '../../schema/model-service.ts';

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('stack').kubeconfig);
  return kc;
}

export function kubeClients(kc = kubeConfig()) {
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    apiext: kc.makeApiClient(ApiextensionsV1Api),
  };
}

/**
 * Creates `<prefix>-<random>`; the returned cleanup deletes it (the namespace controller empties
 * it), the cluster-scoped part of a ModelDock install into it (test/support/install.ts) and the
 * tenant namespaces its controller created (labelled with it as their installation).
 */
export async function createNamespace(core: CoreV1Api, prefix: string): Promise<{ name: string; remove(): Promise<void> }> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return {
    name,
    remove: async () => {
      await uninstallModelDock(name);
      const tenants = await core.listNamespace({ labelSelector: `${LABELS.instance}=${name}` });
      await Promise.all([name, ...tenants.items.map((t) => t.metadata?.name ?? '')].map((n) => core.deleteNamespace({ name: n }).catch(() => undefined)));
    },
  };
}
