// Issue 30's cross-tenant pick, pure: which tenant's queue gets a cluster room that freed up. The
// capacity tenants share is the clusters' (their allotments on one ledger shard); each tenant's own
// quota is its own business (ledger/queue-pick.ts orders within a tenant). The dequeue that carries
// the pick out is ledger/queue-fair.ts.
//
// A tenant's share is Dominant Resource Fairness's: the largest fraction of the shard's allotted
// capacity it holds in any resource, divided by its weight (`tenant_quota.fair_weight`, default 1).
// The lowest share goes first; ties go to the heavier weight (it is further from what it is entitled
// to once it holds anything), then to the tenant named first (a fixed order: two equal tenants
// alternate, as the one admitted holds more afterwards). While two tenants both wait, each
// release goes to the one furthest below its weighted share, so what they hold, and then what they
// are admitted, tracks their weights.
import { RESOURCE_NAMES, type Amounts } from '../schema/model-service.ts';

export interface FairCandidate {
  tenant: string;
  /** What the tenant is charged now (tenant_quota.used), per resource. */
  used: Amounts;
  /** Its weight (≥ 1). */
  weight: number;
}

/** The tenant's weighted dominant share of `capacity` (resources without capacity do not count). */
export function weightedShare(used: Amounts, capacity: Amounts, weight: number): number {
  let dominant = 0;
  for (const r of RESOURCE_NAMES) if (capacity[r] > 0) dominant = Math.max(dominant, used[r] / capacity[r]);
  return dominant / Math.max(1, weight);
}

/** The candidates in the order they are offered a freed room: lowest weighted share first, then the heavier weight, then by name. */
export function fairOrder(candidates: readonly FairCandidate[], capacity: Amounts): FairCandidate[] {
  const share = new Map(candidates.map((c) => [c.tenant, weightedShare(c.used, capacity, c.weight)]));
  return [...candidates].sort(
    (a, b) => share.get(a.tenant)! - share.get(b.tenant)! || b.weight - a.weight || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0),
  );
}
