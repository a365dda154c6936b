// Wires the ModelService controller into a Manager: the Manager's shared informers on
// ModelServices and on the Deployments, Services, Pods and EndpointSlices ModelDock manages; event
// handlers that only compute a key (the CR itself, a child's controlling ModelService, a pod's
// `modeldock.io/model-service` label, a slice's Service name) and enqueue it.
import { API_VERSION, KIND, LABELS } from '../../schema/model-service.ts';
import type { Placement } from '../../schema/placement.ts';
import { Controller, keyOf } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { KubeObject } from '../runtime/informer.ts';
import type { KubeClient } from '../runtime/kube.ts';
import { WriteTracker } from '../runtime/read-your-writes.ts';
import type { Manager } from '../runtime/manager.ts';
import { cacheReader, SERVICE_NAME_LABEL, type Caches } from './reader.ts';
import { modelServiceReconciler, STATUS_HOLD_MS, type StatusHoldMs } from './reconcile.ts';
import type { Deployment, EndpointSlice, ModelService, Pod, Service } from './types.ts';

export interface ModelServiceControllerOptions {
  workers: number;
  resyncMs: number;
  /** See ControllerOptions.batchDelayMs (default 100 ms). */
  batchDelayMs?: number;
  events: EventRecorder;
  /** Client used for reconcile writes (rate-limited); defaults to the manager's. */
  client?: KubeClient;
  pollMs?: number;
  /** The operator's placement of tenant pods (controller/main.ts: POD_NODE_SELECTOR, …); none by default. */
  placement?: Placement;
  /** How long a rollout's in-between step waits for the children's next report (status-hold.ts); reconcile.ts STATUS_HOLD_MS by default. */
  statusHoldMs?: StatusHoldMs;
}

export const CONTROLLER_NAME = 'modelservice';

/** The key of the ModelService that controls `obj` (ownerReference controller=true), if any. */
export function controllerKey(obj: KubeObject): string | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller === true);
  return ref && ref.kind === KIND && ref.apiVersion === API_VERSION ? keyOf(obj.metadata.namespace, ref.name) : undefined;
}

export function setupModelServiceController(mgr: Manager, o: ModelServiceControllerOptions): { controller: Controller } {
  const caches: Caches = {
    modelServices: mgr.cache.informer<ModelService>('ModelService'),
    deployments: mgr.cache.informer<Deployment>('Deployment'),
    services: mgr.cache.informer<Service>('Service'),
    pods: mgr.cache.informer<Pod>('Pod'),
    endpointSlices: mgr.cache.informer<EndpointSlice>('EndpointSlice'),
  };
  const client = o.client ?? mgr.client;
  const tracker = new WriteTracker();
  const track = (kind: string) => ({
    add: (obj: KubeObject) => tracker.observed(kind, obj),
    update: (obj: KubeObject) => tracker.observed(kind, obj),
    delete: (obj: KubeObject) => tracker.forget(kind, obj.metadata.namespace, obj.metadata.name),
  });
  caches.modelServices.addHandlers(track('ModelService'));
  caches.deployments.addHandlers(track('Deployment'));
  caches.services.addHandlers(track('Service'));
  const controller = new Controller({
    name: CONTROLLER_NAME,
    workers: o.workers,
    log: mgr.log,
    metrics: mgr.metrics,
    resyncMs: o.resyncMs,
    batchDelayMs: o.batchDelayMs ?? 100,
    keys: () => caches.modelServices.list().map((m) => keyOf(m.metadata.namespace, m.metadata.name)),
    reconcile: modelServiceReconciler({ client, cache: cacheReader(caches, tracker), events: o.events, tracker, pollMs: o.pollMs, placement: o.placement, statusHoldMs: o.statusHoldMs ?? STATUS_HOLD_MS }),
  });

  const self = (m: ModelService) => controller.enqueue(keyOf(m.metadata.namespace, m.metadata.name));
  caches.modelServices.addHandlers({ add: self, update: self, delete: self });
  const owner = (obj: KubeObject) => controller.enqueue(controllerKey(obj));
  for (const inf of [caches.deployments, caches.services]) inf.addHandlers({ add: owner, update: owner, delete: owner });
  const podOwner = (p: Pod) => {
    const name = p.metadata.labels?.[LABELS.modelService];
    if (name) controller.enqueue(keyOf(p.metadata.namespace, name));
  };
  caches.pods.addHandlers({ add: podOwner, update: podOwner, delete: podOwner });
  // A slice belongs to the Service of the same name as its ModelService.
  const sliceOwner = (s: EndpointSlice) => {
    const name = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (name) controller.enqueue(keyOf(s.metadata.namespace, name));
  };
  caches.endpointSlices.addHandlers({ add: sliceOwner, update: sliceOwner, delete: sliceOwner });

  mgr.addController(controller);
  return { controller };
}
