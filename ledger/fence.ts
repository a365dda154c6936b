// The epoch fence of controller writes, per tenant (docs/design.md, "Fencing"). The epoch numbers
// come from `controller_epoch` (global); the fence itself is the tenant's `tenant_fence` row, on
// the tenant's shard. A controller write joins the row of the tenant it writes on
// `epoch = <the writer's epoch>` (the writer's epoch is the statement's FIRST argument), so it is
// single-shard, and once a newer leader has raised the row, a paused ex-leader's late statements
// match no row and change nothing. `alias` is the written table's alias (it has a `tenant` column).
export const FENCE = (alias: string): string => `JOIN tenant_fence f ON f.tenant = ${alias}.tenant AND f.epoch = ?`;
