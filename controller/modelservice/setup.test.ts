// The wiring of setupModelServiceController without a cluster: a Manager whose informers answer
// from the in-memory API server (fake-api.ts), the key reconciled through the Controller.
import { describe, expect, it } from 'vitest';
import { FINALIZER, type ModelService } from '../../schema/model-service.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { paths } from '../runtime/kube.ts';
import { silentLogger } from '../runtime/log.ts';
import type { Manager } from '../runtime/manager.ts';
import { fakeApi, type FakeApi } from './fake-api.ts';
import { STATUS_HOLD_MS } from './reconcile.ts';
import { setupModelServiceController, type ModelServiceControllerOptions } from './setup.ts';

function fakeManager(api: FakeApi): Manager {
  const byName = (path: (ns: string, name: string) => string) => ({ addHandlers: () => undefined, get: (ns: string, name: string) => api.objects.get(path(ns, name)), list: () => [] });
  const listed = (items: () => KubeObject[]) => ({ addHandlers: () => undefined, get: () => undefined, list: items });
  const informers: Record<string, unknown> = {
    ModelService: byName(paths.modelService),
    Deployment: byName(paths.deployment),
    Service: byName(paths.service),
    Pod: listed(() => api.pods),
    EndpointSlice: listed(() => api.endpointSlices),
  };
  return { cache: { informer: (kind: string) => informers[kind] }, client: api.client, log: silentLogger, addController: () => undefined } as unknown as Manager;
}

function newModelService(): FakeApi {
  const api = fakeApi();
  api.objects.set(paths.modelService('lab', 'chat'), {
    apiVersion: 'modeldock.io/v1alpha1',
    kind: 'ModelService',
    metadata: { name: 'chat', namespace: 'lab', uid: 'ms-uid', generation: 1, resourceVersion: '1', finalizers: [FINALIZER] },
    spec: { image: 'example.invalid/m:1', replicas: 1, resources: { cpu: '1', memory: '1Gi' } },
  } as ModelService);
  return api;
}

const options = (o: Partial<ModelServiceControllerOptions> = {}): ModelServiceControllerOptions => ({ workers: 1, resyncMs: 0, events: { record: () => undefined }, ...o });

describe('setupModelServiceController', () => {
  it("holds a new ModelService's Pending by default (STATUS_HOLD_MS): the first reconcile creates the children and requeues", async () => {
    expect(STATUS_HOLD_MS.pending).toBeGreaterThan(0);
    const api = newModelService();
    const { controller } = setupModelServiceController(fakeManager(api), options());
    expect(await controller.reconcileOnce('lab/chat')).toBe('requeue_after');
    expect(api.writes.map((w) => w.verb)).toEqual(['create', 'create']);
  });

  it('statusHoldMs 0 writes the Pending status at once', async () => {
    const api = newModelService();
    const { controller } = setupModelServiceController(fakeManager(api), options({ statusHoldMs: { pending: 0, progressing: 0 } }));
    expect(await controller.reconcileOnce('lab/chat')).toBe('success');
    expect(api.writes.map((w) => w.verb)).toEqual(['create', 'create', 'update']);
    expect((api.objects.get(paths.modelService('lab', 'chat')) as ModelService).status?.phase).toBe('Pending');
  });
});
