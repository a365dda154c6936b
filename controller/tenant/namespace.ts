// The tenant namespace as the controller creates it: PURE. Labelled as ModelDock's (managed-by,
// the tenant, the installation when INSTANCE is set) and with Pod Security `restricted` enforced,
// so no pod in it — ModelDock's or anyone's — runs privileged, as root or with host access.
import { LABELS, MANAGED_BY } from '../../schema/model-service.ts';
import type { KubeObject } from '../runtime/informer.ts';

export type Namespace = KubeObject & { status?: { phase?: string } };

/** Pod Security admission labels of every tenant namespace. */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
};

/** Labels on everything of a tenant's namespace the controller owns: managed-by, the tenant, the installation if any. */
export function tenantLabels(tenant: string, instance: string | undefined): Record<string, string> {
  return { [LABELS.managedBy]: MANAGED_BY, [LABELS.tenant]: tenant, ...(instance ? { [LABELS.instance]: instance } : {}) };
}

export function tenantNamespaceObject(name: string, tenant: string, instance: string | undefined): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...tenantLabels(tenant, instance), ...POD_SECURITY_LABELS } } };
}

/** Why an existing namespace under the tenant's name cannot be used as this tenant's, or undefined (it is ours). */
export function foreignNamespace(ns: Namespace, tenant: string, instance: string | undefined): string | undefined {
  const labels = ns.metadata.labels ?? {};
  if (labels[LABELS.managedBy] !== MANAGED_BY) return `namespace ${ns.metadata.name} exists and is not ModelDock's (no ${LABELS.managedBy}=${MANAGED_BY} label)`;
  if (labels[LABELS.tenant] !== tenant) return `namespace ${ns.metadata.name} belongs to tenant "${labels[LABELS.tenant] ?? ''}", not "${tenant}"`;
  if (instance && labels[LABELS.instance] !== instance) return `namespace ${ns.metadata.name} belongs to another ModelDock installation`;
  return undefined;
}
