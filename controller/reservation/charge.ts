// Does a ModelService's spec stay within what its admission charged? PURE: the per-replica
// resources and replicas of the live spec against the reservation's charged totals, with the
// charge arithmetic of schema/model-service.ts (`totalAmounts`), so a resource added there is
// compared here too. Scaling down is within the charge (nothing is refunded before release).
import { REPLICA_RESOURCES, totalAmounts, type Amounts, type ReplicaResource } from '../../schema/model-service.ts';

export interface ScaledSpec {
  replicas: number;
  resources: Partial<Record<ReplicaResource, string>>;
}

/**
 * True when every per-replica resource of `spec` fits in `charged`. Throws on an unparseable
 * quantity. The `modelservices` count does not scale with replicas and is not compared (an
 * admission from before migration 0003 was charged 0 of it).
 */
export function withinCharge(spec: ScaledSpec, charged: Amounts): boolean {
  const want = totalAmounts(spec);
  return REPLICA_RESOURCES.every((r) => want[r] <= charged[r]);
}

/**
 * The most replicas of these per-replica resources that the charge covers, at most
 * `spec.replicas` (the answer is `spec.replicas` when it fits). `totalAmounts` grows with the
 * replicas, so a binary search over 0..replicas finds it in O(log replicas).
 */
export function chargedReplicas(spec: ScaledSpec, charged: Amounts): number {
  if (withinCharge(spec, charged)) return spec.replicas;
  let lo = 0; // fits (or nothing does: 0 is the floor)
  let hi = spec.replicas; // does not fit
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (withinCharge({ ...spec, replicas: mid }, charged)) lo = mid;
    else hi = mid;
  }
  return lo;
}
