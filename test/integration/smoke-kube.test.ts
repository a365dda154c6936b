// Smoke tests of the real control plane: scheduler + KWOK make pods Ready, the Deployment
// and ReplicaSet controllers scale, the garbage collector performs foreground deletion,
// the apiserver serves a CRD with a status subresource, and kubectl reaches the cluster.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PatchStrategy, setHeaderOptions, Watch, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { isNotFoundError, waitFor } from '../support/wait.ts';

const HOLD = 'modeldock.test/hold';

const { kc, core, apps, custom, apiext } = kubeClients();
let ns: { name: string; remove(): Promise<void> };
beforeAll(async () => {
  ns = await createNamespace(core, 'smoke');
  // Pods are admitted only once the serviceaccount controller created `default` here.
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
});
afterAll(async () => ns?.remove());

const deployment = (name: string): V1Deployment => ({
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: 'example.invalid/smoke:1' }] },
    },
  },
});

describe('control plane with KWOK', () => {
  it('Deployment → ReplicaSet → Pod bound to the KWOK node → Ready → availableReplicas 1, then foreground deletion', async () => {
    const namespace = ns.name;
    await apps.createNamespacedDeployment({ namespace, body: deployment('web') });

    const rs = await waitFor('a ReplicaSet owned by the Deployment', async () => {
      const list = await apps.listNamespacedReplicaSet({ namespace });
      return list.items.find((r) => r.metadata?.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === 'web'));
    });
    const pod = await waitFor('a Ready pod on the fake node', async () => {
      const list = await core.listNamespacedPod({ namespace, labelSelector: 'app=web' });
      return list.items.find(
        (p) =>
          p.spec?.nodeName === 'kwok-node-0' &&
          p.metadata?.ownerReferences?.some((o) => o.uid === rs.metadata?.uid) &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
    });
    expect(pod.status?.phase).toBe('Running');
    const available = await waitFor('availableReplicas == 1', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace });
      return d.status?.availableReplicas === 1 ? d : undefined;
    });
    expect(available.status?.readyReplicas).toBe(1);

    // Watch the pods while deleting with Foreground propagation: each must be seen
    // Terminating (deletionTimestamp set) before it disappears.
    const terminating = new Set<string>();
    const deleted = new Set<string>();
    const watch = await new Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/pods`,
      { labelSelector: 'app=web' },
      (type: string, obj: V1Pod) => {
        const name = obj.metadata?.name ?? '';
        if (obj.metadata?.deletionTimestamp) terminating.add(name);
        if (type === 'DELETED') deleted.add(name);
      },
      () => undefined,
    );
    try {
      // The pod is held by a finalizer of ours, so the foreground deletion cannot finish before
      // the owner has been seen waiting for it (never a check that passes only if we were fast).
      const podName = pod.metadata?.name ?? '';
      const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
      await core.patchNamespacedPod({ name: podName, namespace, body: { metadata: { finalizers: [HOLD] } } }, mergePatch);
      await apps.deleteNamespacedDeployment({ name: 'web', namespace, propagationPolicy: 'Foreground' });
      // Foreground: the owner stays, with the foregroundDeletion finalizer, until dependents are gone.
      await waitFor('the held pod to be Terminating', async () => terminating.has(podName));
      const owner = await apps.readNamespacedDeployment({ name: 'web', namespace });
      expect(owner.metadata?.finalizers).toContain('foregroundDeletion');
      expect(owner.metadata?.deletionTimestamp).toBeDefined();
      await core.patchNamespacedPod({ name: podName, namespace, body: { metadata: { finalizers: null } } }, mergePatch);

      await waitFor('the Deployment to be gone', async () =>
        apps.readNamespacedDeployment({ name: 'web', namespace }).then(
          () => false,
          (e: unknown) => {
            if (isNotFoundError(e)) return true;
            throw e;
          },
        ),
      );
      expect((await apps.listNamespacedReplicaSet({ namespace })).items).toHaveLength(0);
      expect((await core.listNamespacedPod({ namespace, labelSelector: 'app=web' })).items).toHaveLength(0);
      await waitFor('the watch to report the pod deleted', async () => deleted.has(pod.metadata?.name ?? ''));
      expect(terminating.has(pod.metadata?.name ?? '')).toBe(true);
    } finally {
      watch.abort();
    }
  });

  it('serves a CRD with a status subresource: create, read, patch status', async () => {
    const group = `smoke${Date.now()}.modeldock.io`;
    const crdName = `widgets.${group}`;
    await apiext.createCustomResourceDefinition({
      body: {
        metadata: { name: crdName },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } } },
                    status: { type: 'object', properties: { phase: { type: 'string' } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    try {
      await waitFor('the CRD to be Established', async () => {
        const crd = await apiext.readCustomResourceDefinition({ name: crdName });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      });
      const ref = { group, version: 'v1', namespace: ns.name, plural: 'widgets' };
      await waitFor(
        'the new resource to be served',
        () =>
          custom.createNamespacedCustomObject({
            ...ref,
            body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 2 } },
          }),
      );
      // The schema is enforced by the real apiserver.
      const invalid = await custom
        .createNamespacedCustomObject({
          ...ref,
          body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w2' }, spec: { size: 0 } },
        })
        .catch((e: { code?: number }) => e);
      expect((invalid as { code?: number }).code).toBe(422);

      const created = (await custom.getNamespacedCustomObject({ ...ref, name: 'w1' })) as {
        metadata: { generation: number };
        spec: { size: number };
      };
      expect(created.spec.size).toBe(2);

      const patched = (await custom.patchNamespacedCustomObjectStatus(
        { ...ref, name: 'w1', body: { status: { phase: 'Ready' }, spec: { size: 99 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )) as { metadata: { generation: number }; spec: { size: number }; status: { phase: string } };
      expect(patched.status.phase).toBe('Ready');
      // The status subresource ignores spec changes and does not bump the generation.
      expect(patched.spec.size).toBe(2);
      expect(patched.metadata.generation).toBe(created.metadata.generation);
    } finally {
      await apiext.deleteCustomResourceDefinition({ name: crdName });
    }
  });

  it('kubectl --kubeconfig … get nodes shows the KWOK node Ready', async () => {
    const stack = inject('stack');
    const { stdout } = await promisify(execFile)(join(stack.binDir, 'kubectl'), [
      '--kubeconfig',
      stack.kubeconfig,
      'get',
      'nodes',
      '--no-headers',
    ]);
    expect(stdout).toMatch(/^kwok-node-0\s+Ready\s/m);
  });
});
