// Where the reconciler reads the world from: the informer caches (normal case) or the API
// server itself (after a 409 Conflict, and on the deletion path before removing the finalizer,
// where a lagging cache must not be trusted).
import { LABELS } from '../../schema/model-service.ts';
import type { Informer, KubeObject } from '../runtime/informer.ts';
import { paths, type KubeClient } from '../runtime/kube.ts';
import type { WriteTracker } from '../runtime/read-your-writes.ts';
import type { Deployment, EndpointSlice, ModelService, Pod, Service } from './types.ts';

export interface Reader {
  modelService(ns: string, name: string): Promise<ModelService | undefined>;
  deployment(ns: string, name: string): Promise<Deployment | undefined>;
  service(ns: string, name: string): Promise<Service | undefined>;
  /** Pods labelled as belonging to this ModelService (including Terminating ones). */
  pods(ns: string, msName: string): Promise<Pod[]>;
  /** The EndpointSlices of the Service named `serviceName` (label kubernetes.io/service-name). */
  endpointSlices(ns: string, serviceName: string): Promise<EndpointSlice[]>;
}

/** The label the EndpointSlice controller puts on every slice: the name of its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface Caches {
  modelServices: Informer<ModelService & { metadata: { name: string } }>;
  deployments: Informer<Deployment>;
  services: Informer<Service>;
  pods: Informer<Pod>;
  endpointSlices: Informer<EndpointSlice>;
}

/** Reads the informer caches; with a tracker, our own latest writes win over a lagging cache. */
export function cacheReader(c: Caches, tracker?: WriteTracker): Reader {
  const via = <T extends KubeObject>(kind: string, ns: string, name: string, cached: T | undefined) =>
    tracker ? tracker.read(kind, ns, name, cached) : cached;
  return {
    modelService: async (ns, name) => via('ModelService', ns, name, c.modelServices.get(ns, name)),
    deployment: async (ns, name) => via('Deployment', ns, name, c.deployments.get(ns, name)),
    service: async (ns, name) => via('Service', ns, name, c.services.get(ns, name)),
    pods: async (ns, msName) => c.pods.list(ns).filter((p) => p.metadata.labels?.[LABELS.modelService] === msName),
    endpointSlices: async (ns, serviceName) => c.endpointSlices.list(ns).filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === serviceName),
  };
}

export function liveReader(client: KubeClient): Reader {
  return {
    modelService: (ns, name) => client.getOrUndefined<ModelService>(paths.modelService(ns, name)),
    deployment: (ns, name) => client.getOrUndefined<Deployment>(paths.deployment(ns, name)),
    service: (ns, name) => client.getOrUndefined<Service>(paths.service(ns, name)),
    pods: async (ns, msName) => (await client.list<Pod>(paths.pods(ns), { labelSelector: `${LABELS.modelService}=${msName}` })).items,
    endpointSlices: async (ns, serviceName) => (await client.list<EndpointSlice>(paths.endpointSlices(ns), { labelSelector: `${SERVICE_NAME_LABEL}=${serviceName}` })).items,
  };
}
