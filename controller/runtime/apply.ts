// createOrPatch: make a child object match what we want, writing only when needed.
//   absent                          → POST                         → 'created'
//   present, ours, matches desired  → nothing                      → 'unchanged'
//   present, ours, differs          → JSON merge patch guarded by  → 'updated'
//                                     metadata.resourceVersion (409 if the copy was stale)
// "Matches" = the desired object is a SUBSET of the live one (fields the API server defaulted,
// e.g. strategy, terminationMessagePath, clusterIP, are never fought over; quantities compare
// by value, 1Gi = 1024Mi) AND the live object's desired-hash annotation equals the hash of the
// desired object (so a field we REMOVED from our desired state — e.g. a memory limit — is
// still noticed). Arrays are compared whole, and a merge patch replaces them whole.
import { canonicalJson } from '../../schema/canonical-json.ts';
import { createHash } from 'node:crypto';
import { parseQuantity } from '../../schema/quantity.ts';
import type { KubeObject } from './informer.ts';
import type { KubeClient } from './kube.ts';

export type ApplyResult = 'unchanged' | 'created' | 'updated';
export const DESIRED_HASH_ANNOTATION = 'modeldock.io/desired-hash';

/** JSON with object keys sorted, so equal values serialise equally. */
export const hashOf = (v: unknown): string => createHash('sha256').update(canonicalJson(v)).digest('hex').slice(0, 16);

/** Drops undefined, empty arrays and empty objects (the API server omits them: keeping them would never match). */
export function prune<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => prune(x) as unknown) as T;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const p = prune(x);
      if (p === undefined) continue;
      if (Array.isArray(p) && p.length === 0) continue;
      if (p && typeof p === 'object' && !Array.isArray(p) && Object.keys(p).length === 0) continue;
      out[k] = p;
    }
    return out as T;
  }
  return v;
}

const QUANTITY_PARENT = new Set(['requests', 'limits']);
/** Where the API server keeps quantities in canonical form: a container's resources, a ResourceQuota's spec.hard. */
const isQuantityField = (path: string[]): boolean =>
  (QUANTITY_PARENT.has(path.at(-2) ?? '') && path.includes('resources')) || (path.at(-2) === 'hard' && path.at(-3) === 'spec');

function sameQuantity(a: string, b: string): boolean {
  try {
    const x = parseQuantity(a);
    const y = parseQuantity(b);
    return x.num * y.den === y.num * x.den;
  } catch {
    return false;
  }
}

/** Is every field of `desired` present and equal in `actual`? (see the file comment) */
export function isSubset(desired: unknown, actual: unknown, path: string[] = []): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    return Array.isArray(actual) && actual.length === desired.length && desired.every((d, i) => isSubset(d, actual[i], [...path, String(i)]));
  }
  if (desired !== null && typeof desired === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const a = actual as Record<string, unknown>;
    return Object.entries(desired as Record<string, unknown>).every(([k, d]) => isSubset(d, a[k], [...path, k]));
  }
  if (typeof desired === 'string' && typeof actual === 'string' && isQuantityField(path)) {
    return desired === actual || sameQuantity(desired, actual);
  }
  return desired === actual;
}

/** The desired object with its hash annotation (what is created, and what a patch carries). */
export function withDesiredHash<T extends KubeObject>(desired: T): T & { metadata: { annotations: Record<string, string> } } {
  const h = hashOf(desired);
  return { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata.annotations, [DESIRED_HASH_ANNOTATION]: h } } };
}

/** Does the live object already match (no write needed)? */
export function converged(desired: KubeObject, live: KubeObject): boolean {
  // apiVersion/kind: list items from the API server do not carry them.
  const { apiVersion: _a, kind: _k, metadata, ...rest } = withDesiredHash(desired);
  const { ownerReferences: _o, ...meta } = metadata;
  return isSubset({ ...rest, metadata: meta }, live);
}

export interface CreateOrPatchArgs<T extends KubeObject> {
  client: KubeClient;
  /** Collection path for create; the object path is `${collection}/${name}`. */
  collection: string;
  desired: T;
  /** The live object as last seen (cache or API), or undefined if absent. The caller checked it is ours. */
  live: T | undefined;
}

export async function createOrPatch<T extends KubeObject>({ client, collection, desired, live }: CreateOrPatchArgs<T>): Promise<{ result: ApplyResult; object: T }> {
  const want = withDesiredHash(desired);
  if (!live) return { result: 'created', object: await client.create<T>(collection, want) };
  if (converged(desired, live)) return { result: 'unchanged', object: live };
  const { ownerReferences: _keep, ...meta } = want.metadata; // only a controlled child is patched: the owner is right
  const patch = { ...want, metadata: { ...meta, resourceVersion: live.metadata.resourceVersion } };
  return { result: 'updated', object: await client.mergePatch<T>(`${collection}/${desired.metadata.name}`, patch) };
}
