// The operator's cluster commands (`npm run cluster`, scripts/cluster.ts): the one writer of a
// cluster's definition and of its operator-made state changes, each with its `cluster_audit` row in
// the same global transaction (docs/multi-cluster.md "Cluster states, epochs and who writes them").
//   add    a new cluster, joining (no placement until its controller takes it over), its capacity in
//          escrow: an allotment row per shard, then add's spread granted through the saga
//          (ledger/allotment-moves.ts). Re-runnable: a re-run with the same definition completes
//          what a crash left (the spread's move ids are deterministic), any other is refused.
//   drain  ready → draining: no new placement; what runs there stays.
//   ready  draining → ready; lost → ready once its controller is back and nothing is stranded.
//   capacity  a new capacity for some resources: a raise goes to the pool, a cut is taken from the pool
//          after the shards' free slack came back to it (refused, nothing written, when pool and free
//          slack together cannot cover it); then a rebalance to the new spread.
//   rebalance  each shard's allotment back to add's spread of the capacity: what a shard holds above
//          its share goes back to the pool (as far as its free slack allows), then the pool tops up
//          the shards below theirs — both through the sagas, one audit row.
// After a state change every shard's allotment follows it (ledger/cluster-store.ts syncModes).
import type { Amounts } from '../../schema/model-service.ts';
import { ledgerAnchors, type ShardAnchor } from '../../ledger/anchors.ts';
import { grant, reclaim } from '../../ledger/allotment-moves.ts';
import { anyPositive, CLUSTER_NAME, notAClusterName, operatorTransition, spreadCapacity, type ClusterState, type OperatorAction } from '../../ledger/clusters.ts';
import { CLUSTER_COLUMNS, clusterFromRow, ensureAllotment, writeAudit, readAllAllotments, readCluster, sumOf, syncModes, type ClusterRow } from '../../ledger/cluster-store.ts';
import { bool } from '../../ledger/columns.ts';
import type { Db, Queryable } from '../../ledger/db.ts';
import { addAmounts, AMOUNT_COLUMNS, AMOUNT_PLACEHOLDERS, amountArgs, amountsOf, prefixedAmountColumns, RESOURCE_NAMES } from '../../ledger/resources.ts';

/** A command the cluster's state or definition refuses; nothing was written. */
export class ClusterRefused extends Error {}

export interface AdminContext {
  db: Db;
  /** Who acts (the audit row's actor). */
  actor: string;
  now: () => Date;
}

export const DEFAULT_LEASE_MS = 15_000;

export interface AddCluster {
  name: string;
  capacity: Amounts;
  leaseMs?: number;
  reason?: string;
}

export interface AddResult {
  cluster: ClusterRow;
  /** False when the cluster existed with this definition and the run only completed it. */
  created: boolean;
  anchors: ShardAnchor[];
}

const sameAmounts = (a: Amounts, b: Amounts) => RESOURCE_NAMES.every((r) => a[r] === b[r]);

/** Refuses a name that is not a cluster name and any amount that is not whole and ≥ 0. */
function checkDefinition(name: string, capacity: Partial<Amounts>): void {
  if (!CLUSTER_NAME.test(name)) throw new ClusterRefused(notAClusterName(name));
  for (const [r, v] of Object.entries(capacity)) if (!Number.isSafeInteger(v) || v < 0) throw new ClusterRefused(`capacity ${r} must be a whole amount ≥ 0`);
}

export async function addCluster(ctx: AdminContext, o: AddCluster): Promise<AddResult> {
  checkDefinition(o.name, o.capacity);
  if (!anyPositive(o.capacity)) throw new ClusterRefused('a cluster with no capacity can place nothing');
  const leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1000) throw new ClusterRefused('the lease must be at least 1 s');
  const anchors = await ledgerAnchors(ctx.db);
  const now = ctx.now();
  const created = await ctx.db.transaction(async (tx) => {
    const found = (await tx.execute(`SELECT ${CLUSTER_COLUMNS} FROM cluster WHERE name = ? FOR UPDATE`, [o.name])).rows[0];
    if (found) {
      const c = clusterFromRow(found);
      if (c.state !== 'joining' || !sameAmounts(c.capacity, o.capacity) || c.leaseMs !== leaseMs) {
        throw new ClusterRefused(`cluster ${o.name} exists (${c.state}, epoch ${c.epoch}); a re-run of add must repeat its definition and finds it joining`);
      }
      return false;
    }
    await tx.execute(
      `INSERT INTO cluster (name, state, version, epoch, lease_ms, ${prefixedAmountColumns('capacity')}, ${prefixedAmountColumns('pool')}, state_changed_at, created_at, updated_at)
       VALUES (?, 'joining', 1, 0, ?, ${AMOUNT_PLACEHOLDERS}, ${AMOUNT_PLACEHOLDERS}, ?, ?, ?)`,
      [o.name, leaseMs, ...amountArgs(o.capacity), ...amountArgs(o.capacity), now, now, now],
    );
    await writeAudit(tx, { cluster: o.name, action: 'add', actor: ctx.actor, reason: o.reason, epoch: 0, detail: { capacity: o.capacity, leaseMs, shards: anchors.length }, at: now });
    return true;
  });
  const cluster = await mustRead(ctx.db, o.name);
  for (const a of anchors) await ensureAllotment(ctx.db, a.anchor, o.name, ctx.now());
  await syncModes(ctx.db, anchors, cluster, ctx.now());
  const spread = spreadCapacity(o.capacity, anchors.length);
  const addedMs = cluster.createdAt ? Date.parse(cluster.createdAt) : 0;
  for (const [i, a] of anchors.entries()) {
    const want = spread.grants[i];
    if (!want || !anyPositive(want)) continue;
    const outcome = await grant(ctx.db, { id: `add:${o.name}:${addedMs}:${a.anchor}`, cluster: o.name, anchor: a.anchor, want, by: ctx.actor }, ctx.now);
    if (outcome === 'short') throw new Error(`cluster ${o.name}: its pool cannot give anchor ${a.anchor} its share; run \`npm run ledger:check\``);
  }
  return { cluster: await mustRead(ctx.db, o.name), created, anchors };
}

export interface StateChangeResult {
  cluster: ClusterRow;
  changed: boolean;
  from: ClusterState;
}

/** `drain` or `ready`, with its audit row; refused (ClusterRefused, nothing written) where the state does not allow it. */
export async function changeClusterState(ctx: AdminContext, o: { name: string; action: OperatorAction; reason?: string }): Promise<StateChangeResult> {
  const anchors = await ledgerAnchors(ctx.db);
  // What `ready` of a lost cluster must know of every shard, read first (docs/multi-cluster.md); `drain` needs none of it.
  const strandedAny = o.action === 'ready' && anyPositive(sumOf(await readAllAllotments(ctx.db, anchors, o.name), 'stranded'));
  const now = ctx.now();
  const result = await ctx.db.transaction(async (tx) => {
    const row = (
      await tx.execute(
        `SELECT ${CLUSTER_COLUMNS}, (heartbeat_at IS NOT NULL AND heartbeat_at >= TIMESTAMPADD(MICROSECOND, -lease_ms * 1000, UTC_TIMESTAMP(3))) AS fresh
           FROM cluster WHERE name = ? FOR UPDATE`,
        [o.name],
      )
    ).rows[0];
    if (!row) throw new ClusterRefused(`no cluster named ${o.name}`);
    const c = clusterFromRow(row);
    const decision = operatorTransition(o.action, c.state, { heartbeatFresh: bool(row.fresh), strandedAny });
    if (decision.kind === 'refused') throw new ClusterRefused(`${o.action} ${o.name}: ${decision.reason}`);
    if (decision.kind === 'unchanged') return { changed: false, from: c.state };
    await tx.execute('UPDATE cluster SET state = ?, version = version + 1, state_changed_at = ?, updated_at = ? WHERE name = ?', [decision.to, now, now, o.name]);
    await writeAudit(tx, { cluster: o.name, action: o.action, actor: ctx.actor, reason: o.reason, epoch: c.epoch, detail: { from: c.state, to: decision.to }, at: now });
    return { changed: true, from: c.state };
  });
  const cluster = await mustRead(ctx.db, o.name);
  await syncModes(ctx.db, anchors, cluster, ctx.now());
  return { cluster, ...result };
}

export interface RebalanceResult {
  /** What went back to the pool, and what the pool gave, summed over the shards. */
  reclaimed: Amounts;
  granted: Amounts;
  cluster: ClusterRow;
}

/** What an allotment has free: allotted − reserved − stranded (never below 0). */
const slackOf = (a: { allotted: Amounts; reserved: Amounts; stranded: Amounts }): Amounts => amountsOf((r) => Math.max(0, a.allotted[r] - a.reserved[r] - a.stranded[r]));

/**
 * `rebalance`: every shard's allotment toward add's spread of the capacity (after a shard was given
 * more than its share, or the spread changed). Reclaims first, each bounded by the shard's free
 * slack, so what runs there keeps its room; then grants from what the pool holds. Each move is
 * all-or-nothing and may find less than it read (a placement in between): it then moves nothing
 * and a later rebalance finishes the job.
 */
export async function rebalanceCluster(ctx: AdminContext, o: { name: string; reason?: string }): Promise<RebalanceResult> {
  const before = await readCluster(ctx.db, o.name);
  if (!before) throw new ClusterRefused(`no cluster named ${o.name}`);
  if (before.state === 'forgotten') throw new ClusterRefused(`rebalance ${o.name}: forgotten: add it again`);
  const anchors = await ledgerAnchors(ctx.db);
  const spread = spreadCapacity(before.capacity, anchors.length);
  const run = `rebalance:${o.name}:${ctx.now().getTime()}`;
  let reclaimed = amountsOf(() => 0);
  let granted = amountsOf(() => 0);
  // Read once; each move's outcome keeps the local view current (a move that finds less moves nothing).
  const rows = await readAllAllotments(ctx.db, anchors, o.name);
  const allotted = new Map(rows.map((a) => [a.anchor, a.allotted]));
  for (const [i, a] of anchors.entries()) {
    const row = rows.find((x) => x.anchor === a.anchor);
    const share = spread.grants[i];
    if (!row || !share) continue;
    const back = amountsOf((r) => Math.max(0, Math.min(row.allotted[r] - share[r], slackOf(row)[r])));
    if (!anyPositive(back)) continue;
    const applied = await reclaim(ctx.db, { id: `${run}:${row.anchor}:reclaim`, cluster: o.name, anchor: row.anchor, want: back, by: ctx.actor }, ctx.now);
    reclaimed = addAmounts(reclaimed, applied);
    allotted.set(row.anchor, amountsOf((r) => row.allotted[r] - applied[r]));
  }
  let pool = (await mustRead(ctx.db, o.name)).pool;
  for (const [i, a] of anchors.entries()) {
    const share = spread.grants[i];
    if (!share) continue;
    if (!allotted.has(a.anchor)) await ensureAllotment(ctx.db, a.anchor, o.name, ctx.now());
    const has = allotted.get(a.anchor) ?? amountsOf(() => 0);
    const want = amountsOf((r) => Math.max(0, Math.min(share[r] - has[r], pool[r])));
    if (!anyPositive(want)) continue;
    if ((await grant(ctx.db, { id: `${run}:${a.anchor}:grant`, cluster: o.name, anchor: a.anchor, want, by: ctx.actor }, ctx.now)) !== 'granted') continue;
    granted = addAmounts(granted, want);
    pool = amountsOf((r) => pool[r] - want[r]);
  }
  const cluster = await mustRead(ctx.db, o.name);
  await ctx.db.transaction((tx) => writeAudit(tx, { cluster: o.name, action: 'rebalance', actor: ctx.actor, reason: o.reason, epoch: cluster.epoch, detail: { reclaimed, granted }, at: ctx.now() }));
  return { reclaimed, granted, cluster };
}

export interface CapacityResult {
  cluster: ClusterRow;
  changed: boolean;
  rebalance?: RebalanceResult;
}

/** `capacity`: the given resources' capacity set to new amounts (see the header). */
export async function setClusterCapacity(ctx: AdminContext, o: { name: string; capacity: Partial<Amounts>; reason?: string }): Promise<CapacityResult> {
  checkDefinition(o.name, o.capacity);
  const c = await readCluster(ctx.db, o.name);
  if (!c) throw new ClusterRefused(`no cluster named ${o.name}`);
  if (c.state === 'forgotten') throw new ClusterRefused(`capacity ${o.name}: forgotten: add it again`);
  const target = { ...c.capacity, ...o.capacity };
  if (sameAmounts(target, c.capacity)) return { cluster: c, changed: false };
  if (!anyPositive(target)) throw new ClusterRefused('a cluster with no capacity can place nothing (drain it instead)');
  const anchors = await ledgerAnchors(ctx.db);
  const rows = await readAllAllotments(ctx.db, anchors, o.name);
  // What a cut needs back in the pool beyond what it holds, and whether the shards' free slack has it.
  let need = amountsOf((r) => Math.max(0, c.capacity[r] - target[r] - c.pool[r]));
  const free = amountsOf((r) => rows.reduce((sum, a) => sum + slackOf(a)[r], 0));
  const short = RESOURCE_NAMES.filter((r) => need[r] > free[r]);
  if (short.length > 0) {
    throw new ClusterRefused(`capacity ${o.name}: ${short.map((r) => `${r} can go down by at most ${c.pool[r] + free[r]} (the pool and the shards' free slack; the rest is reserved or stranded)`).join('; ')}`);
  }
  const run = `capacity:${o.name}:${ctx.now().getTime()}`;
  for (const a of rows) {
    if (!anyPositive(need)) break;
    const back = amountsOf((r) => Math.min(need[r], slackOf(a)[r]));
    if (!anyPositive(back)) continue;
    const applied = await reclaim(ctx.db, { id: `${run}:${a.anchor}`, cluster: o.name, anchor: a.anchor, want: back, by: ctx.actor }, ctx.now);
    need = amountsOf((r) => need[r] - applied[r]);
  }
  const now = ctx.now();
  const delta = amountsOf((r) => target[r] - c.capacity[r]);
  const set = await ctx.db.transaction(async (tx) => {
    const r = await tx.execute(
      `UPDATE cluster SET ${RESOURCE_NAMES.map((x) => `capacity_${AMOUNT_COLUMNS[x]} = capacity_${AMOUNT_COLUMNS[x]} + ?, pool_${AMOUNT_COLUMNS[x]} = pool_${AMOUNT_COLUMNS[x]} + ?`).join(', ')}, updated_at = ?
        WHERE name = ? AND state <> 'forgotten' AND ${RESOURCE_NAMES.map((x) => `pool_${AMOUNT_COLUMNS[x]} + ? >= 0`).join(' AND ')}`,
      [...RESOURCE_NAMES.flatMap((x) => [delta[x], delta[x]]), now, o.name, ...amountArgs(delta)],
    );
    if (r.rowsAffected !== 1) return false;
    await writeAudit(tx, { cluster: o.name, action: 'capacity', actor: ctx.actor, reason: o.reason, epoch: c.epoch, detail: { from: c.capacity, to: target }, at: now });
    return true;
  });
  // Placements took the slack between the read and the reclaims: what came back stays in the pool, for the next try.
  if (!set) throw new ClusterRefused(`capacity ${o.name}: the pool could not cover the cut (placed meanwhile); nothing else changed, try again`);
  return { changed: true, rebalance: await rebalanceCluster(ctx, { name: o.name, ...(o.reason ? { reason: o.reason } : {}) }), cluster: await mustRead(ctx.db, o.name) };
}

export async function mustRead(q: Queryable, name: string): Promise<ClusterRow> {
  const c = await readCluster(q, name);
  if (!c) throw new Error(`cluster ${name} vanished`);
  return c;
}
