// The tenant namespace's ResourceQuota: the ledger's hard quota of the tenant, mirrored so that the
// API server refuses pods beyond it even if the ledger were wrong (defence in depth). PURE.
// cpu and memory are limited as requests AND limits (ModelDock's containers set both equal, and
// a pod without them is refused); GPUs as requests (extended resources have no overcommit);
// pods as the count quota times the most replicas one admission may ask for (MAX_REPLICAS).
// A resource the ledger has no row for is 0: the ledger admits nothing that charges it.
// The count of ModelServices itself is not mirrored: a `count/modelservices.modeldock.io` quota
// refuses every ModelService until kube-controller-manager's quota discovery has seen the CRD.
import type { Amounts } from '../../schema/model-service.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { tenantLabels } from './namespace.ts';

export const TENANT_QUOTA_NAME = 'modeldock-tenant-quota';

export type ResourceQuota = KubeObject & { spec?: { hard?: Record<string, string> }; status?: { hard?: Record<string, string>; used?: Record<string, string> } };

export function tenantResourceQuota(namespace: string, tenant: string, hard: Partial<Amounts>, o: { maxReplicas: number; instance: string | undefined }): ResourceQuota {
  const cpu = `${hard.cpu ?? 0}m`;
  const memory = `${hard.memory ?? 0}Mi`;
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: TENANT_QUOTA_NAME, namespace, labels: tenantLabels(tenant, o.instance) },
    spec: {
      hard: {
        'requests.cpu': cpu,
        'limits.cpu': cpu,
        'requests.memory': memory,
        'limits.memory': memory,
        'requests.nvidia.com/gpu': String(hard['nvidia.com/gpu'] ?? 0),
        pods: String((hard.modelservices ?? 0) * o.maxReplicas),
      },
    },
  };
}
