// The Manager's shared cache (controller-runtime's cache): ONE informer per resource kind in the
// watched namespace, created the first time a controller asks for it and handed to every
// controller that asks again. Controllers never build informers themselves, so the ModelService
// controller and the ledger share one watch and one store of ModelServices and of Pods.
// Children (Deployments, Services, Pods, the Services' EndpointSlices) are cached only when they carry ModelDock's managed-by
// label: the cache holds what ModelDock owns, not the whole namespace.
import { LABELS, MANAGED_BY } from '../../schema/model-service.ts';
import type { Informer, KubeObject } from './informer.ts';
import { paths } from './kube.ts';

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;

/** What the cache can hold: collection path in a namespace, the informer's name, its label selector. */
export const CACHED_KINDS = {
  ModelService: { name: 'modelservices', path: paths.modelServices, labelSelector: undefined },
  Deployment: { name: 'deployments', path: paths.deployments, labelSelector: MANAGED },
  Service: { name: 'services', path: paths.services, labelSelector: MANAGED },
  Pod: { name: 'pods', path: paths.pods, labelSelector: MANAGED },
  // The EndpointSlice controller copies the Service's labels onto its slices.
  EndpointSlice: { name: 'endpointslices', path: paths.endpointSlices, labelSelector: MANAGED },
} as const satisfies Record<string, { name: string; path: (ns: string) => string; labelSelector: string | undefined }>;
export type CachedKind = keyof typeof CACHED_KINDS;

export type MakeInformer = (name: string, path: string, labelSelector: string | undefined) => Informer<KubeObject>;

export class Cache {
  readonly namespace: string;
  readonly #make: MakeInformer;
  readonly #informers = new Map<CachedKind, Informer<KubeObject>>();

  constructor(namespace: string, make: MakeInformer) {
    this.namespace = namespace;
    this.#make = make;
  }

  /** The one informer of `kind` (created on first use; register handlers before the Manager starts). */
  informer<T extends KubeObject>(kind: CachedKind): Informer<T> {
    let inf = this.#informers.get(kind);
    if (!inf) {
      const k = CACHED_KINDS[kind];
      inf = this.#make(k.name, k.path(this.namespace), k.labelSelector);
      this.#informers.set(kind, inf);
    }
    return inf as unknown as Informer<T>;
  }

  get informers(): ReadonlyArray<Informer<KubeObject>> {
    return [...this.#informers.values()];
  }
}
