// Desired children of a ModelService: PURE functions of the object and its parsed spec.
// No I/O here; table-tested in desired-children.test.ts and desired-placement.test.ts.
import { canonicalJson } from '../../schema/canonical-json.ts';
import { API_VERSION, containerResources, endpointFor, KIND, LABELS, MANAGED_BY, type ModelServiceSpec } from '../../schema/model-service.ts';
import type { Affinity, NodeSelector, Placement, Toleration } from '../../schema/placement.ts';
import { prune } from '../runtime/apply.ts';
import type { KubeObject } from '../runtime/informer.ts';
import type { Deployment, ModelService, Service } from './types.ts';

export const CONTAINER_NAME = 'model';
export const PORT_NAME = 'http';
/** The numeric user and group tenant containers run as (Pod Security `restricted` needs non-root, and only a number can be verified). */
export const TENANT_UID = 10001;
const TMP_VOLUME = 'tmp';
/** Size limit of the writable /tmp (an emptyDir; counts against the pod's ephemeral storage). */
export const TMP_SIZE_LIMIT = '256Mi';
/**
 * Ephemeral storage of one container (requests = limits): the writable /tmp above, the container
 * log and any writable layer. A container over it is evicted by the kubelet instead of filling
 * the node's disk; not charged by the ledger (every replica gets the same).
 */
export const EPHEMERAL_STORAGE = '1Gi';

/**
 * What a container without a GPU request gets in its env, so that an image's own ENV (CUDA base
 * images carry `NVIDIA_VISIBLE_DEVICES=all`) cannot hand it a node's GPUs behind the device
 * plugin: a container's env overrides the image's. `void` makes the NVIDIA container runtime
 * behave as runc (no device, no driver); an empty AMD_VISIBLE_DEVICES names no AMD device.
 * Tenants cannot set these names (schema/env-policy.ts), so nothing of theirs is overridden.
 */
export const NO_GPU_ENV: ReadonlyArray<{ name: string; value: string }> = [
  { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' },
  { name: 'AMD_VISIBLE_DEVICES', value: '' },
];

/** Always for a tag (a moved tag is picked up), IfNotPresent for a digest (immutable). */
export function pullPolicyFor(image: string): 'Always' | 'IfNotPresent' {
  return /@sha256:[a-f0-9]{64}$/.test(image) ? 'IfNotPresent' : 'Always';
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** DNS-1035 label: a Service name must start with a letter. */
const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Why this ModelService's name cannot name its children, or undefined. */
export function invalidName(name: string): string | undefined {
  if (name.length > 63 || !DNS1035.test(name)) {
    return `name "${name}" must be a DNS-1035 label (≤ 63 chars, lower-case letters, digits, "-", starting with a letter) to name its Service`;
  }
  return undefined;
}

/** Labels selecting this ModelService's pods (immutable once the Deployment exists). */
export function selectorLabels(ms: Pick<ModelService, 'metadata'>): Record<string, string> {
  return { [LABELS.managedBy]: MANAGED_BY, [LABELS.modelService]: ms.metadata.name };
}

export const selectorString = (ms: Pick<ModelService, 'metadata'>): string =>
  Object.entries(selectorLabels(ms))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * Labels on the Deployment, the Service and the pod template: the selector labels plus the
 * admission id, tenant and installation (INSTANCE) the CR carries. A CR made by hand without an
 * admission id uses its own name; without a tenant (an installation), no such label is set.
 */
export function childLabels(ms: Pick<ModelService, 'metadata'>): Record<string, string> {
  const own = ms.metadata.labels ?? {};
  const labels: Record<string, string> = { ...selectorLabels(ms), [LABELS.admissionId]: own[LABELS.admissionId] ?? ms.metadata.name };
  for (const key of [LABELS.tenant, LABELS.instance]) {
    const value = own[key];
    if (value && LABEL_VALUE.test(value) && value.length <= 63) labels[key] = value;
  }
  return labels;
}

export function ownerReference(ms: Pick<ModelService, 'metadata'>) {
  return { apiVersion: API_VERSION, kind: KIND, name: ms.metadata.name, uid: ms.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** Is `child` controlled by this ModelService (controller owner reference with its UID)? */
export function isControlledBy(child: KubeObject, ms: Pick<ModelService, 'metadata'>): boolean {
  return (child.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === ms.metadata.uid);
}

export const endpointOf = (ms: Pick<ModelService, 'metadata'>, spec: Pick<ModelServiceSpec, 'port'>): string =>
  endpointFor(ms.metadata.name, ms.metadata.namespace, spec.port);

/** The pod template fields an operator's placement sets. */
export interface PodPlacement {
  nodeSelector?: NodeSelector;
  tolerations?: Toleration[];
  affinity?: Affinity;
}
const PLACEMENT_FIELDS = ['nodeSelector', 'tolerations', 'affinity'] as const;
/** On a Deployment: the placement ModelDock put in its pod template (canonical JSON); absent when none. */
export const PLACEMENT_ANNOTATION = 'modeldock.io/placement';

/**
 * Where a pod runs: the operator's placement (controller environment, never the tenant's spec),
 * plus its GPU additions for a pod that requests GPUs — a GPU node selector key wins over the same
 * key of the general one; a toleration in both lists appears once. Nothing (or only empty
 * settings) configured → {}. Not pruned: an empty labelSelector in an affinity term selects every
 * pod, an absent one none (schema/placement.ts already drops what the API server omits).
 */
export function podPlacement(p: Placement, requestsGpu: boolean): PodPlacement {
  const gpu = requestsGpu ? (p.gpu ?? {}) : {};
  const out: PodPlacement = {};
  const nodeSelector = { ...p.nodeSelector, ...gpu.nodeSelector };
  if (Object.keys(nodeSelector).length > 0) out.nodeSelector = nodeSelector;
  const tolerations = new Map([...(p.tolerations ?? []), ...(gpu.tolerations ?? [])].map((t) => [canonicalJson(t), t]));
  if (tolerations.size > 0) out.tolerations = [...tolerations.values()];
  if (Object.keys(p.affinity ?? {}).length > 0) out.affinity = p.affinity;
  return out;
}

/**
 * The Deployment of a ModelService. `placement` is the operator's; with none, the pod template
 * has no nodeSelector, tolerations or affinity at all (and the Deployment no placement annotation).
 */
export function desiredDeployment(ms: ModelService, spec: ModelServiceSpec, placement: Placement = {}): Deployment {
  const labels = childLabels(ms);
  // requests = limits = exactly what the ledger charges per replica, in canonical quantities,
  // plus the bound on ephemeral storage.
  const charged = containerResources(spec.resources);
  const requestsGpu = charged['nvidia.com/gpu'] !== undefined;
  const resources = { ...charged, 'ephemeral-storage': EPHEMERAL_STORAGE };
  const placed = podPlacement(placement, requestsGpu);
  const env = [...spec.env, ...(requestsGpu ? [] : NO_GPU_ENV)];
  const annotations = Object.keys(placed).length > 0 ? { [PLACEMENT_ANNOTATION]: canonicalJson(placed) } : undefined;
  const deployment: Deployment = prune({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: ms.metadata.name, namespace: ms.metadata.namespace, labels, annotations, ownerReferences: [ownerReference(ms)] },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selectorLabels(ms) },
      // No pod beyond the replicas, ever: a rollout (a changed placement) replaces one pod at a
      // time instead of surging, so what runs never exceeds what the ledger charged — nor the
      // tenant namespace's ResourceQuota, which would refuse the surge pod and stall the rollout.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: TENANT_UID,
            runAsGroup: TENANT_UID,
            fsGroup: TENANT_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          // The root filesystem is read-only: /tmp is the one writable place.
          volumes: [{ name: TMP_VOLUME, emptyDir: { sizeLimit: TMP_SIZE_LIMIT } }],
          containers: [
            {
              name: CONTAINER_NAME,
              image: spec.image,
              imagePullPolicy: pullPolicyFor(spec.image),
              args: spec.args,
              env: env.map((e) => (e.value === '' ? { name: e.name } : { name: e.name, value: e.value })),
              ports: [{ name: PORT_NAME, containerPort: spec.port, protocol: 'TCP' }],
              resources: { requests: resources, limits: resources },
              readinessProbe: {
                httpGet: { path: spec.readinessPath, port: PORT_NAME, scheme: 'HTTP' },
                periodSeconds: 5,
                timeoutSeconds: 1,
                successThreshold: 1,
                failureThreshold: 3,
              },
              volumeMounts: [{ name: TMP_VOLUME, mountPath: '/tmp' }],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
                runAsNonRoot: true,
                runAsUser: TENANT_UID,
                runAsGroup: TENANT_UID,
                seccompProfile: { type: 'RuntimeDefault' },
              },
            },
          ],
        },
      },
    },
  });
  // After prune (see podPlacement): the placement goes in as the operator wrote it.
  Object.assign(deployment.spec!.template!.spec!, placed);
  return deployment;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The RFC 7386 merge patch that turns `from` into `to`: a key of `from` that `to` lacks becomes null. */
function mergeDiff(from: unknown, to: unknown): unknown {
  if (to === undefined) return null;
  if (!isObject(from) || !isObject(to)) return to;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(from)) out[k] = null;
  for (const [k, v] of Object.entries(to)) out[k] = mergeDiff(from[k], v);
  return out;
}
const removes = (patch: unknown): boolean => patch === null || (isObject(patch) && Object.values(patch).some(removes));

/** The placement the live Deployment's annotation says ModelDock set (only placement fields), or {}. */
function lastPlacement(live: Deployment): Record<string, unknown> {
  try {
    const last: unknown = JSON.parse(live.metadata.annotations?.[PLACEMENT_ANNOTATION] ?? '{}');
    return isObject(last) ? last : {};
  } catch {
    return {};
  }
}

/**
 * createOrPatch sends a JSON merge patch, which never removes a field it does not name: when the
 * operator drops or narrows the placement, the old node selector keys, tolerations or affinity
 * would stay. This merge patch (guarded by resourceVersion) removes what ModelDock set before —
 * per the live Deployment's PLACEMENT_ANNOTATION, as kubectl apply's last-applied annotation — and
 * no longer wants, and sets the desired placement in the same write, so the pod template never
 * passes through a looser placement. A field someone else set is left alone. undefined: nothing to remove.
 */
export function placementCleanup(desired: Deployment, live: Deployment): Record<string, unknown> | undefined {
  const last = lastPlacement(live);
  const want: Record<string, unknown> = desired.spec?.template?.spec ?? {};
  const spec: Record<string, unknown> = {};
  for (const f of PLACEMENT_FIELDS) if (last[f] !== undefined || want[f] !== undefined) spec[f] = mergeDiff(last[f], want[f]);
  if (!removes(spec)) return undefined;
  return {
    metadata: { resourceVersion: live.metadata.resourceVersion, annotations: { [PLACEMENT_ANNOTATION]: desired.metadata.annotations?.[PLACEMENT_ANNOTATION] ?? null } },
    spec: { template: { spec } },
  };
}

export function desiredService(ms: ModelService, spec: ModelServiceSpec): Service {
  return prune({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ms.metadata.name, namespace: ms.metadata.namespace, labels: childLabels(ms), ownerReferences: [ownerReference(ms)] },
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(ms),
      ports: [{ name: PORT_NAME, port: spec.port, targetPort: spec.port, protocol: 'TCP' }],
    },
  });
}
