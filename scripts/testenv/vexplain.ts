// Classifies a vtgate plan (the JSON of `VEXPLAIN PLAN <statement>`) by how far it reaches:
// one shard, several shards, every shard, the unsharded keyspace, or more than one keyspace.
// Pure: no I/O. The routing variants are Vitess's engine opcodes (go/vt/vtgate/engine/routing.go).

/** A node of vtgate's plan description (only the fields read here). */
export interface PlanNode {
  OperatorType: string;
  Variant?: string;
  Keyspace?: { Name: string; Sharded: boolean };
  /** Insert: the vindex value of each row, by vindex name (`"null"` when the statement has no such column). */
  VindexValues?: Record<string, string>;
  Inputs?: PlanNode[];
}

export type Reach =
  /** Every route lands in the unsharded keyspace. */
  | 'unsharded'
  /** One shard, chosen by the vindex value (EqualUnique / Equal / an insert routed per row). */
  | 'single-shard'
  /** Several routes joined, filtered or sub-queried by vtgate itself (each may be single-shard). */
  | 'vtgate-join'
  /** A known set of shards (IN / MultiEqual / Between / SubShard). */
  | 'multi-shard'
  /** Every shard of a sharded keyspace. */
  | 'scatter'
  /** Routes in more than one keyspace. */
  | 'cross-keyspace'
  /** An insert into a sharded table without the vindex column: vtgate places the row by NULL. */
  | 'no-vindex-value'
  /** No routing at all (e.g. SELECT 1). */
  | 'none';

export interface Classification {
  reach: Reach;
  keyspaces: string[];
  /** `OperatorType:Variant` of every routed node, outermost first (e.g. `Update:Scatter`). */
  routes: string[];
}

const SINGLE = new Set(['EqualUnique', 'Equal', 'ByDestination', 'Next']);
const MULTI = new Set(['IN', 'MultiEqual', 'Between', 'SubShard']);
const RANK: Record<Reach, number> = { none: 0, unsharded: 1, 'single-shard': 2, 'vtgate-join': 3, 'multi-shard': 4, scatter: 5, 'cross-keyspace': 6, 'no-vindex-value': 7 };

function walk(node: PlanNode, out: PlanNode[]): void {
  if (node.Keyspace) out.push(node);
  for (const child of node.Inputs ?? []) walk(child, out);
}

function reachOf(node: PlanNode): Reach {
  const ks = node.Keyspace;
  if (!ks) return 'none';
  if (!ks.Sharded) return 'unsharded';
  const v = node.Variant ?? '';
  if (v === 'Scatter') return 'scatter';
  if (MULTI.has(v)) return 'multi-shard';
  if (SINGLE.has(v)) return 'single-shard';
  // An insert into a sharded table is routed row by row on the vindex value of each row.
  if (node.OperatorType === 'Insert' && v === 'Sharded') {
    return Object.values(node.VindexValues ?? {}).some((value) => /^\s*null\s*$/i.test(value)) ? 'no-vindex-value' : 'single-shard';
  }
  return 'scatter'; // unknown variant on a sharded keyspace: assume the worst
}

export function classifyPlan(plan: PlanNode): Classification {
  const routed: PlanNode[] = [];
  walk(plan, routed);
  const keyspaces = [...new Set(routed.map((n) => n.Keyspace?.Name ?? ''))].sort();
  const routes = routed.map((n) => `${n.OperatorType}:${n.Variant ?? ''}`);
  let reach: Reach = routed.length === 0 ? 'none' : 'unsharded';
  for (const n of routed) {
    const r = reachOf(n);
    if (RANK[r] > RANK[reach]) reach = r;
  }
  if (keyspaces.length > 1 && reach !== 'no-vindex-value') return { reach: 'cross-keyspace', keyspaces, routes };
  // Two or more routes into one sharded keyspace are combined by vtgate, not by one shard.
  if (reach === 'single-shard' && routed.filter((n) => n.Keyspace?.Sharded).length > 1) reach = 'vtgate-join';
  return { reach, keyspaces, routes };
}

/** Parses the single JSON cell VEXPLAIN PLAN returns. */
export function parsePlan(cell: unknown): PlanNode {
  const text = typeof cell === 'string' ? cell : JSON.stringify(cell);
  const plan = JSON.parse(text) as unknown;
  if (typeof plan !== 'object' || plan === null || typeof (plan as { OperatorType?: unknown }).OperatorType !== 'string') {
    throw new Error(`not a vtgate plan: ${text.slice(0, 200)}`);
  }
  return plan as PlanNode;
}
