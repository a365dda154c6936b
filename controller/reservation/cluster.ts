// What the ledger reads LIVE from the API server (release decisions never trust the informer
// cache, which may lag right after a restart): the ModelService under a reservation's
// deterministic name, every pod carrying its admission id (Terminating ones included) and, for a
// decrease's refund, its Deployment — plus the four writes: create the CR, delete it with preconditions + foreground propagation,
// scale it back to its charge, and surface ReleaseBlocked as a condition on the CR while it
// exists. Every live read is reported to `onLiveRead` (the modeldock_ledger_live_reads_total metric).
import { LABELS, NO_AMOUNTS, type Condition, type ModelService } from '../../schema/model-service.ts';
import { autoscaleIdentity, autoscalePatch } from '../../schema/autoscale.ts';
import { isAlreadyExists, isApiError, isNotFound } from '../runtime/errors.ts';
import { paths, type KubeClient } from '../runtime/kube.ts';
import { withinCharge, type ScaledSpec } from './charge.ts';
import type { ObservedCR, ObservedPod } from './decide.ts';
import type { ObservedDeployment } from './scale.ts';


export type DeleteOutcome = 'deleted' | 'gone' | 'precondition-failed';
export type ScaleOutcome = 'scaled' | 'gone' | 'conflict';
export type LiveRead = 'modelservice' | 'pods' | 'deployment';

export interface ReservationCluster {
  readModelService(ns: string, name: string): Promise<(ObservedCR & { object: ModelService }) | null>;
  listPods(ns: string, admissionId: string): Promise<ObservedPod[]>;
  /** The ModelService's Deployment (same name), live: a decrease is refunded only once it has scaled down. */
  readDeployment(ns: string, name: string): Promise<ObservedDeployment | null>;
  /** The tenant's namespace, ResourceQuota and NetworkPolicies exist as desired (controller/tenant/space.ts). */
  ensureTenantSpace(tenant: string): Promise<void>;
  /** Creates the CR; on AlreadyExists returns the object found under the name instead. */
  createModelService(obj: ModelService): Promise<{ created: boolean; object: ModelService }>;
  deleteModelService(ns: string, name: string, pre: { uid: string; resourceVersion?: string }): Promise<DeleteOutcome>;
  /** Sets spec.replicas, guarded by the resourceVersion the decision was made on. */
  /** Merge-patches spec.replicas (and, when given, spec.autoscale to the spec of that identity; null removes it) guarded by resourceVersion. */
  scaleModelService(ns: string, name: string, replicas: number, resourceVersion: string, autoscale?: string | null): Promise<ScaleOutcome>;
  /** Sets one status condition (others kept), guarded by resourceVersion; no-op if the CR is gone. */
  setCondition(ns: string, name: string, condition: Condition): Promise<void>;
}

export function observe(ms: ModelService): ObservedCR {
  return {
    uid: ms.metadata.uid ?? '',
    resourceVersion: ms.metadata.resourceVersion ?? '',
    creationTimestamp: new Date(ms.metadata.creationTimestamp ?? 0),
    deleting: Boolean(ms.metadata.deletionTimestamp),
    finalizers: ms.metadata.finalizers ?? [],
    admissionId: ms.metadata.labels?.[LABELS.admissionId],
    tenant: ms.metadata.labels?.[LABELS.tenant],
    ready: ms.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    scale: scaleOf(ms),
    autoscale: autoscaleIdentity(ms.spec?.autoscale),
  };
}

/** spec.replicas and resources as the charge arithmetic reads them; null when it cannot (a bad quantity). */
function scaleOf(ms: ModelService): ScaledSpec | null {
  const spec: ScaledSpec = { replicas: ms.spec?.replicas ?? 0, resources: ms.spec?.resources ?? {} };
  try {
    withinCharge(spec, NO_AMOUNTS);
    return spec;
  } catch {
    return null;
  }
}

interface DeploymentScale {
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; replicas?: number };
}

interface PodMeta {
  metadata: { name: string; deletionTimestamp?: string };
}

export interface ReservationClusterOptions {
  /** Every live read (the modeldock_ledger_live_reads_total metric). */
  onLiveRead?: (what: LiveRead) => void;
  /** The tenant's space, with this client (controller/tenant/space.ts TenantSpaces.ensure). */
  ensureTenantSpace: (tenant: string, client: KubeClient) => Promise<void>;
}

export function kubeReservationCluster(client: KubeClient, o: ReservationClusterOptions): ReservationCluster {
  const onLiveRead = o.onLiveRead ?? (() => undefined);
  return {
    ensureTenantSpace: (tenant) => o.ensureTenantSpace(tenant, client),
    async readModelService(ns, name) {
      onLiveRead('modelservice');
      const ms = await client.getOrUndefined<ModelService>(paths.modelService(ns, name));
      return ms ? { ...observe(ms), object: ms } : null;
    },
    async listPods(ns, admissionId) {
      onLiveRead('pods');
      const list = await client.list<PodMeta>(paths.pods(ns), { labelSelector: `${LABELS.admissionId}=${admissionId}` });
      return list.items.map((p) => ({ name: p.metadata.name, terminating: Boolean(p.metadata.deletionTimestamp) }));
    },
    async readDeployment(ns, name) {
      onLiveRead('deployment');
      const d = await client.getOrUndefined<DeploymentScale>(paths.deployment(ns, name));
      if (!d) return null;
      return {
        generation: d.metadata.generation ?? 0,
        observedGeneration: d.status?.observedGeneration ?? -1,
        specReplicas: d.spec?.replicas ?? 1,
        statusReplicas: d.status?.replicas ?? 0,
      };
    },
    async createModelService(obj) {
      try {
        return { created: true, object: await client.create<ModelService>(paths.modelServices(obj.metadata.namespace), obj) };
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const found = await client.getOrUndefined<ModelService>(paths.modelService(obj.metadata.namespace, obj.metadata.name));
        if (!found) throw err; // deleted in between: the caller retries
        return { created: false, object: found };
      }
    },
    async deleteModelService(ns, name, preconditions) {
      try {
        await client.delete(paths.modelService(ns, name), { propagationPolicy: 'Foreground', preconditions });
        return 'deleted';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        if (isApiError(err, 409)) return 'precondition-failed';
        throw err;
      }
    },
    async scaleModelService(ns, name, replicas, resourceVersion, autoscale) {
      const spec = autoscale === undefined ? { replicas } : { replicas, autoscale: autoscalePatch(autoscale) };
      try {
        await client.mergePatch(paths.modelService(ns, name), { metadata: { resourceVersion }, spec });
        return 'scaled';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        if (isApiError(err, 409)) return 'conflict';
        throw err;
      }
    },
    async setCondition(ns, name, condition) {
      onLiveRead('modelservice');
      const ms = await client.getOrUndefined<ModelService>(paths.modelService(ns, name));
      if (!ms) return;
      const conditions = [...(ms.status?.conditions ?? []).filter((c) => c.type !== condition.type), condition];
      try {
        // A merge patch replaces the whole array: send all conditions, with the resourceVersion read.
        await client.mergePatch(`${paths.modelService(ns, name)}/status`, { metadata: { resourceVersion: ms.metadata.resourceVersion }, status: { conditions } });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  };
}
