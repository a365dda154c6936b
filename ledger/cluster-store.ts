// Reads of the cluster tables and the per-shard writes every cluster state change is followed by
// (docs/multi-cluster.md). `cluster` and `cluster_audit` live in the global keyspace; a shard's
// allotment rows are reached by its anchor (ledger/anchors.ts), so each statement here is either
// unsharded or single-shard.
import type { Amounts } from '../schema/model-service.ts';
import { type ShardAnchor } from './anchors.ts';
import { MODE_OF_STATE, clusterState, type AllotmentMode, type ClusterState } from './clusters.ts';
import { int, str, strOrNull, timeOrNull } from './columns.ts';
import type { Queryable } from './db.ts';
import { amountsFromRow, amountsOf, prefixedAmountColumns } from './resources.ts';

export interface ClusterRow {
  name: string;
  state: ClusterState;
  version: number;
  epoch: number;
  leaseMs: number;
  capacity: Amounts;
  pool: Amounts;
  heartbeatAt: string | null;
  heartbeatBy: string | null;
  stateChangedAt: string | null;
  createdAt: string | null;
}

export interface AllotmentRow {
  anchor: string;
  cluster: string;
  mode: AllotmentMode;
  modeVersion: number;
  allotted: Amounts;
  reserved: Amounts;
  stranded: Amounts;
}

export interface AuditRow {
  seq: number;
  cluster: string;
  action: string;
  actor: string;
  reason: string | null;
  epoch: number;
  detail: string | null;
  at: string | null;
}

export const CLUSTER_COLUMNS = `name, state, version, epoch, lease_ms, ${prefixedAmountColumns('capacity')}, ${prefixedAmountColumns('pool')}, heartbeat_at, heartbeat_by, state_changed_at, created_at`;

export function clusterFromRow(row: Record<string, unknown>): ClusterRow {
  return {
    name: str(row.name),
    state: clusterState(str(row.state)),
    version: int(row.version),
    epoch: int(row.epoch),
    leaseMs: int(row.lease_ms),
    capacity: amountsFromRow(row, 'capacity_'),
    pool: amountsFromRow(row, 'pool_'),
    heartbeatAt: timeOrNull(row.heartbeat_at),
    heartbeatBy: strOrNull(row.heartbeat_by),
    stateChangedAt: timeOrNull(row.state_changed_at),
    createdAt: timeOrNull(row.created_at),
  };
}

export async function readCluster(q: Queryable, name: string): Promise<ClusterRow | undefined> {
  const r = await q.execute(`SELECT ${CLUSTER_COLUMNS} FROM cluster WHERE name = ?`, [name]);
  return r.rows[0] ? clusterFromRow(r.rows[0]) : undefined;
}

export async function listClusters(q: Queryable): Promise<ClusterRow[]> {
  return (await q.execute(`SELECT ${CLUSTER_COLUMNS} FROM cluster ORDER BY name`)).rows.map(clusterFromRow);
}

const ALLOTMENT_COLUMNS = `anchor, cluster, mode, mode_version, ${prefixedAmountColumns('allotted')}, ${prefixedAmountColumns('reserved')}, ${prefixedAmountColumns('stranded')}`;

function allotmentFromRow(row: Record<string, unknown>): AllotmentRow {
  return {
    anchor: str(row.anchor),
    cluster: str(row.cluster),
    mode: str(row.mode) as AllotmentMode,
    modeVersion: int(row.mode_version),
    allotted: amountsFromRow(row, 'allotted_'),
    reserved: amountsFromRow(row, 'reserved_'),
    stranded: amountsFromRow(row, 'stranded_'),
  };
}

/** One anchor's allotment of a cluster, as a list of at most one row (single-shard: the anchor routes to its shard). */
export async function readAllotments(q: Queryable, anchor: string, cluster: string): Promise<AllotmentRow[]> {
  return (await q.execute(`SELECT ${ALLOTMENT_COLUMNS} FROM cluster_allotment WHERE anchor = ? AND cluster = ?`, [anchor, cluster])).rows.map(allotmentFromRow);
}

/** One anchor's allotment of a cluster, its row locked for the caller's transaction (`FOR UPDATE`). */
export async function lockAllotment(tx: Queryable, anchor: string, cluster: string): Promise<AllotmentRow | undefined> {
  const row = (await tx.execute(`SELECT ${ALLOTMENT_COLUMNS} FROM cluster_allotment WHERE anchor = ? AND cluster = ? FOR UPDATE`, [anchor, cluster])).rows[0];
  return row ? allotmentFromRow(row) : undefined;
}

/** Every cluster's allotment on one anchor: the tenant's shard's view of the clusters, which placement ranks (single-shard). */
export async function readAnchorAllotments(q: Queryable, anchor: string): Promise<AllotmentRow[]> {
  return (await q.execute(`SELECT ${ALLOTMENT_COLUMNS} FROM cluster_allotment WHERE anchor = ?`, [anchor])).rows.map(allotmentFromRow);
}

/** Every allotment row on one shard, whatever its anchor (shard-targeted: the checker walks every row, current anchor or not). */
export async function readShardAllotments(shard: Queryable): Promise<AllotmentRow[]> {
  return (await shard.execute(`SELECT ${ALLOTMENT_COLUMNS} FROM cluster_allotment ORDER BY anchor, cluster`)).rows.map(allotmentFromRow);
}

/** A cluster's allotments on every shard, in the anchors' order (one single-shard read per anchor). */
export async function readAllAllotments(q: Queryable, anchors: readonly ShardAnchor[], cluster: string): Promise<AllotmentRow[]> {
  const out: AllotmentRow[] = [];
  for (const a of anchors) out.push(...(await readAllotments(q, a.anchor, cluster)));
  return out;
}

/** The shard's allotment row of a cluster, created closed (nothing allotted) if it has none: `add` makes one per anchor before granting. */
export async function ensureAllotment(q: Queryable, anchor: string, cluster: string, now: Date): Promise<void> {
  await q.execute(`INSERT IGNORE INTO cluster_allotment (anchor, cluster, mode, mode_version, updated_at) VALUES (?, ?, 'closed', 0, ?)`, [anchor, cluster, now]);
}

/**
 * Each shard's allotment takes the mode of the cluster's state at `version`, unless it already
 * follows that version or a later one: a shard never goes back to an older state's mode, and a
 * re-run (after a crash between the global change and this) is harmless. Returns the rows changed.
 */
export async function syncModes(q: Queryable, anchors: readonly ShardAnchor[], c: { name: string; state: ClusterState; version: number }, now: Date): Promise<number> {
  let changed = 0;
  for (const a of anchors) {
    const r = await q.execute('UPDATE cluster_allotment SET mode = ?, mode_version = ?, updated_at = ? WHERE anchor = ? AND cluster = ? AND mode_version < ?', [
      MODE_OF_STATE[c.state],
      c.version,
      now,
      a.anchor,
      c.name,
      c.version,
    ]);
    changed += r.rowsAffected;
  }
  return changed;
}

/** One `cluster_audit` row, in the transaction of the change it records (global). */
export async function writeAudit(tx: Queryable, a: { cluster: string; action: string; actor: string; reason?: string | null; epoch: number; detail?: unknown; at: Date }): Promise<void> {
  await tx.execute('INSERT INTO cluster_audit (cluster, action, actor, reason, epoch, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    a.cluster,
    a.action,
    a.actor,
    a.reason ?? null,
    a.epoch,
    a.detail === undefined ? null : JSON.stringify(a.detail),
    a.at,
  ]);
}

export async function readAudit(q: Queryable, cluster: string, limit = 20): Promise<AuditRow[]> {
  const r = await q.execute('SELECT seq, cluster, action, actor, reason, epoch, detail, at FROM cluster_audit WHERE cluster = ? ORDER BY seq DESC LIMIT ?', [cluster, limit]);
  return r.rows.map((row) => ({
    seq: int(row.seq),
    cluster: str(row.cluster),
    action: str(row.action),
    actor: str(row.actor),
    reason: strOrNull(row.reason),
    epoch: int(row.epoch),
    detail: strOrNull(row.detail),
    at: timeOrNull(row.at),
  }));
}

/** Σ of one amount field over allotment rows. */
export function sumOf(rows: readonly AllotmentRow[], field: 'allotted' | 'reserved' | 'stranded'): Amounts {
  return amountsOf((r) => rows.reduce((s, row) => s + row[field][r], 0));
}
