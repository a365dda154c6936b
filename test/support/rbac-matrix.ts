// k8s/base/rbac-matrix.json, typed: the verb × resource table of the controller (see k8s/base/rbac.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export interface MatrixRow {
  apiGroup: string;
  /** `resource` or `resource/subresource`. */
  resource: string;
  /** verb → the code path that needs it. */
  verbs: Record<string, string>;
}

export interface DeniedRow {
  why: string;
  /** own: the controller's namespace; tenant: a tenant namespace; other: any other namespace; cluster: cluster-scoped. */
  namespace: 'own' | 'tenant' | 'other' | 'cluster';
  apiGroup: string;
  resource: string;
  verbs: string[];
}

export interface RbacMatrix {
  serviceAccount: string;
  /** The Role in the controller's own namespace. */
  own: MatrixRow[];
  /** The ClusterRole modeldock-controller: tenant namespaces (writes confined there by the admission policies) and cluster-wide reads. */
  tenants: MatrixRow[];
  /** The ClusterRole modeldock-metrics-auth. */
  cluster: MatrixRow[];
  denied: DeniedRow[];
}

export type MatrixScope = 'own' | 'tenants' | 'cluster';

export const rbacMatrix: RbacMatrix = JSON.parse(readFileSync(join(repoRoot, 'k8s/base/rbac-matrix.json'), 'utf8')) as RbacMatrix;

/** `group|resource|verb` for every allowed cell of one part of the matrix. */
export function allowedCells(scope: MatrixScope): string[] {
  return rbacMatrix[scope].flatMap((r) => Object.keys(r.verbs).map((v) => `${r.apiGroup}|${r.resource}|${v}`)).sort();
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

/** The same cells from RBAC rules (as the API server returns a Role or ClusterRole). */
export function cellsOfRules(rules: PolicyRule[]): string[] {
  return rules
    .flatMap((r) => (r.apiGroups ?? []).flatMap((g) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}`))))
    .sort();
}

/** `resource/subresource` → the SubjectAccessReview's resource and subresource. */
export function splitResource(resource: string): { resource: string; subresource?: string } {
  const [res, sub] = resource.split('/');
  return sub ? { resource: res!, subresource: sub } : { resource: res! };
}
