// The ModelService an admission becomes, in its tenant's namespace: deterministic name
// md-<admission id>, identity labels (and the installation's, with INSTANCE set),
// the request id and admission time as annotations, the ModelService controller's finalizer
// already in place (it would otherwise spend one more API write per object adding it: bench B3),
// the admitted spec. Pure.
import { ANNOTATIONS, API_VERSION, FINALIZER, KIND, LABELS, type ModelService, type ModelServiceSpec } from '../../schema/model-service.ts';
import { crNameFor } from '../../schema/admission.ts';

export interface Admission {
  id: string;
  tenant: string;
  requestId: string;
  createdAt: Date;
}

export function modelServiceFor(a: Admission, spec: ModelServiceSpec, namespace: string, instance?: string): ModelService {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: crNameFor(a.id),
      namespace,
      labels: { [LABELS.admissionId]: a.id, [LABELS.tenant]: a.tenant, ...(instance ? { [LABELS.instance]: instance } : {}) },
      annotations: { [ANNOTATIONS.requestId]: a.requestId, [ANNOTATIONS.admittedAt]: a.createdAt.toISOString() },
      finalizers: [FINALIZER],
    },
    spec,
  };
}

/** The identity check of crash gap 2 (docs/design.md, "Crash gaps"): the object under our name is ours iff it carries our admission id and tenant. */
export function isOurs(obj: ModelService, a: Pick<Admission, 'id' | 'tenant'>): boolean {
  return obj.metadata.labels?.[LABELS.admissionId] === a.id && obj.metadata.labels?.[LABELS.tenant] === a.tenant;
}
