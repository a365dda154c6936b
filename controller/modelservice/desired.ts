// Desired children of a ModelService: PURE functions of the object and its parsed spec.
// No I/O here; table-tested in desired.test.ts.
import { API_VERSION, containerResources, endpointFor, KIND, LABELS, MANAGED_BY, type ModelServiceSpec } from '../../schema/model-service.ts';
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
 * admission id and tenant the CR carries. A CR made by hand without an admission id uses its
 * own name; without a tenant, no tenant label is set.
 */
export function childLabels(ms: Pick<ModelService, 'metadata'>): Record<string, string> {
  const own = ms.metadata.labels ?? {};
  const labels: Record<string, string> = { ...selectorLabels(ms), [LABELS.admissionId]: own[LABELS.admissionId] ?? ms.metadata.name };
  const tenant = own[LABELS.tenant];
  if (tenant && LABEL_VALUE.test(tenant) && tenant.length <= 63) labels[LABELS.tenant] = tenant;
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

export function desiredDeployment(ms: ModelService, spec: ModelServiceSpec): Deployment {
  const labels = childLabels(ms);
  // requests = limits = exactly what the ledger charges per replica, in canonical quantities.
  const resources = containerResources(spec.resources);
  return prune({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: ms.metadata.name, namespace: ms.metadata.namespace, labels, ownerReferences: [ownerReference(ms)] },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selectorLabels(ms) },
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
              env: spec.env.map((e) => (e.value === '' ? { name: e.name } : { name: e.name, value: e.value })),
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
