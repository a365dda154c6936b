// The epoch fence of controller writes, per tenant and cluster (docs/design.md, "Fencing";
// docs/multi-cluster.md, "Fencing"). The epoch numbers come from `controller_epoch` (global: no two
// leaderships, of any cluster, share one); the fence itself is the `tenant_fence` row of the
// written row's tenant AND cluster, on the tenant's shard. A controller write joins that row on
// `epoch = <the writer's epoch>` (the statement's FIRST argument), so it is single-shard, and:
// - once a newer leader of that cluster has raised the row, a paused ex-leader's late statements
//   match no row and change nothing;
// - a row of another cluster (an admission placed, or moved, elsewhere) is fenced by that
//   cluster's row, which this leader never raises: the write matches nothing (the cluster guard).
// `alias` is the written table's alias (it has `tenant` and `cluster` columns).
export const FENCE = (alias: string): string => `JOIN tenant_fence f ON f.tenant = ${alias}.tenant AND f.cluster = ${alias}.cluster AND f.epoch = ?`;

/**
 * The fence of a leader writing a row that is not yet on any cluster (a queued admission that
 * its dequeue places): its own cluster's row, named by the statement's first two arguments
 * (cluster, epoch).
 */
export const FENCE_OF_CLUSTER = (alias: string): string => `JOIN tenant_fence f ON f.tenant = ${alias}.tenant AND f.cluster = ? AND f.epoch = ?`;
