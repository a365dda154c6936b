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
  namespace: 'own' | 'other' | 'cluster';
  apiGroup: string;
  resource: string;
  verbs: string[];
}

export interface RbacMatrix {
  serviceAccount: string;
  namespaced: MatrixRow[];
  cluster: MatrixRow[];
  denied: DeniedRow[];
}

export const rbacMatrix: RbacMatrix = JSON.parse(readFileSync(join(repoRoot, 'k8s/base/rbac-matrix.json'), 'utf8')) as RbacMatrix;

/** `group|resource|verb` for every allowed cell; `scope` picks the namespaced or cluster rows. */
export function allowedCells(scope: 'namespaced' | 'cluster'): string[] {
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
