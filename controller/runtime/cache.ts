// The Manager's shared cache (controller-runtime's cache): ONE cluster-wide informer per resource
// kind, created the first time a controller asks for it and handed to every controller that asks
// again. Controllers never build informers themselves, so the ModelService controller and the
// ledger share one watch and one store of ModelServices and of Pods.
// Tenants live in namespaces of their own (controller/tenant/space.ts), so the informers watch
// every namespace — but only what ModelDock owns: children (Deployments, Services, Pods, the
// Services' EndpointSlices) and the tenant namespaces with their ResourceQuotas and
// NetworkPolicies carry ModelDock's managed-by label. With an instance (the controller's INSTANCE,
// several installations in one cluster) every informer also selects that installation's label.
import { LABELS, MANAGED_BY } from '../../schema/model-service.ts';
import type { Informer, KubeObject } from './informer.ts';
import { clusterPaths } from './kube.ts';

/** What the cache can hold: cluster-wide collection path, the informer's name, whether only ModelDock's objects (managed-by) are selected. */
export const CACHED_KINDS = {
  // ModelServices are ModelDock's by their kind; hand-made ones carry no managed-by label.
  ModelService: { name: 'modelservices', path: clusterPaths.modelServices, managedOnly: false },
  Deployment: { name: 'deployments', path: clusterPaths.deployments, managedOnly: true },
  Service: { name: 'services', path: clusterPaths.services, managedOnly: true },
  Pod: { name: 'pods', path: clusterPaths.pods, managedOnly: true },
  // The EndpointSlice controller copies the Service's labels onto its slices.
  EndpointSlice: { name: 'endpointslices', path: clusterPaths.endpointSlices, managedOnly: true },
  Namespace: { name: 'namespaces', path: clusterPaths.namespaces, managedOnly: true },
  ResourceQuota: { name: 'resourcequotas', path: clusterPaths.resourceQuotas, managedOnly: true },
  NetworkPolicy: { name: 'networkpolicies', path: clusterPaths.networkPolicies, managedOnly: true },
} as const satisfies Record<string, { name: string; path: string; managedOnly: boolean }>;
export type CachedKind = keyof typeof CACHED_KINDS;

export type MakeInformer = (name: string, path: string, labelSelector: string | undefined) => Informer<KubeObject>;

/** The label selector of a kind's informer: managed-by for ModelDock's objects, the instance label when set. */
export function selectorFor(kind: CachedKind, instance: string | undefined): string | undefined {
  const parts = [
    ...(CACHED_KINDS[kind].managedOnly ? [`${LABELS.managedBy}=${MANAGED_BY}`] : []),
    ...(instance ? [`${LABELS.instance}=${instance}`] : []),
  ];
  return parts.length > 0 ? parts.join(',') : undefined;
}

export class Cache {
  /** The installation this cache is scoped to (label modeldock.io/instance), or undefined for every object of ModelDock's. */
  readonly #instance: string | undefined;
  readonly #make: MakeInformer;
  readonly #informers = new Map<CachedKind, Informer<KubeObject>>();

  constructor(instance: string | undefined, make: MakeInformer) {
    this.#instance = instance;
    this.#make = make;
  }

  /** The one informer of `kind` (created on first use; register handlers before the Manager starts). */
  informer<T extends KubeObject>(kind: CachedKind): Informer<T> {
    let inf = this.#informers.get(kind);
    if (!inf) {
      const k = CACHED_KINDS[kind];
      inf = this.#make(k.name, k.path, selectorFor(kind, this.#instance));
      this.#informers.set(kind, inf);
    }
    return inf as unknown as Informer<T>;
  }

  get informers(): ReadonlyArray<Informer<KubeObject>> {
    return [...this.#informers.values()];
  }
}
