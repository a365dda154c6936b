// Placement in the charging transaction (docs/multi-cluster.md "T1"): an admission is charged on its
// tenant's quota AND reserved on one cluster's allotment on the tenant's shard, in one transaction,
// so exactly one cluster holds it and no cluster is ever over its capacity. The choice is made
// before the transaction from the shard's (cached) view of the clusters, ranked by the policy
// (ledger/placement-policy.ts); the guarded UPDATE of `reserveRoom`, last in the transaction, is
// the check. While no cluster is registered at all, admissions go to the one unregistered cluster
// `default` and nothing is reserved (every install before issue 33, and a single-cluster install
// that never registers its cluster).
import type { Amounts } from '../schema/model-service.ts';
import { anchorsOf, shardOfTenant, type ShardAnchor } from './anchors.ts';
import { grant, reclaim } from './allotment-moves.ts';
import { anyPositive, UNREGISTERED_CLUSTER, type AllotmentMode } from './clusters.ts';
import { lockAllotment, readAllAllotments, readAllotments, readAnchorAllotments, readCluster, type AllotmentRow } from './cluster-store.ts';
import { str } from './columns.ts';
import type { Db, Queryable, Row } from './db.ts';
import { freeOf, placementPolicy, roomShortfall, type ClusterRoom, type PlacementPolicy } from './placement-policy.ts';
import { addAmounts, amountArgs, amountsOf, AMOUNT_COLUMNS, RESOURCE_NAMES, type ResourceName } from './resources.ts';
import { shardCache, type LedgerShard, type ShardReader } from './shards.ts';

/** Where an admission goes: a registered cluster's room on the tenant's anchor, or the unregistered cluster (anchor null: nothing to reserve). */
export interface Target {
  cluster: string;
  anchor: string | null;
}

/** The room an admission holds: its cluster's allotment row on `anchor` (reservation.cluster, room_anchor). */
export interface Room {
  anchor: string;
  cluster: string;
}

/** Why nothing was placed: the open clusters and the resources each lacks on the tenant's shard (no amounts: they would tell a tenant about others' use). */
export interface ClusterShortfall {
  cluster: string;
  resources: ResourceName[];
}

export type Choice = { type: 'place'; target: Target; slowPath: boolean } | { type: 'none'; clusters: ClusterShortfall[] };

/**
 * An isolate's placement state: the policy and short-lived caches of the shard list, the rooms per
 * anchor and whether any cluster is registered. The database handle is passed per call (the Worker
 * makes one per request).
 */
export interface Placer {
  readonly policy: PlacementPolicy;
  anchors(db: Db): Promise<ShardAnchor[]>;
  anchorOf(db: Db, tenant: string): Promise<string>;
  /** The tenant's shard with its anchor (the shard's Db targets it: a shard-targeted read of its tenants). */
  shardAnchorOf(db: Db, tenant: string): Promise<ShardAnchor>;
  /** The anchor's allotment rows, at most `roomsTtlMs` old unless `fresh`. */
  rooms(db: Queryable, anchor: string, fresh: boolean): Promise<ClusterRoom[]>;
  /** Whether any cluster is registered, at most `roomsTtlMs` old unless `fresh`. */
  registered(db: Queryable, fresh: boolean): Promise<boolean>;
  /**
   * What this isolate just reserved (committed) on a cluster's room: added to the cached view of
   * the anchor, so its next admissions within the cache's life rank the clusters by what they
   * hold now (least-loaded spreads them) instead of piling onto the one the stale view favoured.
   */
  noteReserved(room: Room, amounts: Amounts): void;
  /**
   * Drops the cached shard list: a transaction on the tenant's anchor was refused as cross-shard
   * (isCrossShard: the list predates a reshard), so the next anchor comes from a fresh list.
   */
  forgetShards(): void;
}

export interface PlacerOptions {
  policy?: PlacementPolicy;
  roomsTtlMs?: number;
  /** The shard list (ledger/shards.ts shardCache): a process that reads it elsewhere too passes its own. Default: cached 60 s. */
  shards?: ShardReader;
  now?: () => number;
}

export function createPlacer(o: PlacerOptions = {}): Placer {
  const now = o.now ?? Date.now;
  const roomsTtl = o.roomsTtlMs ?? 1000;
  const shards = o.shards ?? shardCache(60_000, now);
  const anchorCache = new WeakMap<readonly LedgerShard[], ShardAnchor[]>();
  const rooms = new Map<string, { at: number; rooms: ClusterRoom[] }>();
  let registered: { at: number; any: boolean } | undefined;
  /** The anchors of the current shard list, computed once per list. */
  const anchors = async (db: Db) => {
    const list = await shards(db);
    let a = anchorCache.get(list);
    if (!a) anchorCache.set(list, (a = anchorsOf(list)));
    return a;
  };
  const shardAnchorOf = async (db: Db, tenant: string): Promise<ShardAnchor> => {
    const all = await anchors(db);
    const shard = shardOfTenant(all.map((a) => a.shard), tenant);
    return all.find((a) => a.shard === shard)!;
  };
  return {
    policy: o.policy ?? placementPolicy(undefined),
    anchors,
    anchorOf: async (db, tenant) => (await shardAnchorOf(db, tenant)).anchor,
    shardAnchorOf,
    async rooms(db, anchor, fresh) {
      const hit = rooms.get(anchor);
      if (!fresh && hit && now() - hit.at < roomsTtl) return hit.rooms;
      const read = await readAnchorAllotments(db, anchor);
      rooms.set(anchor, { at: now(), rooms: read });
      return read;
    },
    async registered(db, fresh) {
      if (!fresh && registered && now() - registered.at < roomsTtl) return registered.any;
      const any = await anyClusterRegistered(db);
      registered = { at: now(), any };
      return any;
    },
    noteReserved(room, amounts) {
      const hit = rooms.get(room.anchor);
      if (!hit) return;
      const grown = hit.rooms.map((r) => (r.cluster === room.cluster ? { ...r, reserved: addAmounts(r.reserved, amounts) } : r));
      rooms.set(room.anchor, { at: hit.at, rooms: grown });
    },
    forgetShards: () => shards.forget(),
  };
}

/** Whether any cluster is registered (global): while none is, admissions go to the unregistered cluster. */
async function anyClusterRegistered(q: Queryable): Promise<boolean> {
  return (await q.execute('SELECT name FROM cluster LIMIT 1')).rows.length > 0;
}

/** Sets the tenant's preferred clusters, best first (the `affinity` policy's input; [] clears them): one transaction on the tenant's shard. */
export async function writeAffinity(db: Db, tenant: string, clusters: readonly string[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute('DELETE FROM tenant_affinity WHERE tenant = ?', [tenant]);
    if (clusters.length === 0) return;
    await tx.execute(`INSERT INTO tenant_affinity (tenant, cluster, \`rank\`) VALUES ${clusters.map(() => '(?, ?, ?)').join(', ')}`, clusters.flatMap((c, i) => [tenant, c, i]));
  });
}

/** The tenant's preferred clusters, best first (single-shard). */
export async function readAffinity(q: Queryable, tenant: string): Promise<string[]> {
  return (await q.execute('SELECT cluster FROM tenant_affinity WHERE tenant = ? ORDER BY `rank`, cluster', [tenant])).rows.map((r) => str(r.cluster));
}

/**
 * The cluster for an admission of `want`: the first in the policy's order whose room on the tenant's
 * shard fits. A cluster ranked before it that does not fit is offered more room first, once
 * `mayBorrow` agrees (the slow path, `borrow`); if that gives it the room, it is chosen. `fresh`
 * skips the caches (a retry after the room was taken); a cached view that fits nowhere first is read
 * again fresh, so only the rows as they are now decide a borrow or a refusal. `by` names the runner
 * in the moves.
 */
export async function chooseCluster(
  placer: Placer,
  db: Db,
  tenant: string,
  want: Amounts,
  o: { fresh: boolean; by: string; mayBorrow: () => Promise<boolean> },
): Promise<Choice> {
  const anchor = await placer.anchorOf(db, tenant);
  const rooms = await placer.rooms(db, anchor, o.fresh);
  if (rooms.length === 0 && !(await placer.registered(db, o.fresh))) return { type: 'place', target: UNREGISTERED, slowPath: false };
  const affinity = placer.policy.readsAffinity ? await readAffinity(db, tenant) : [];
  const ranked = placer.policy.rank({ want, rooms, affinity });
  // A cached view never decides a borrow or a refusal: it may predate a grant or a release.
  if (!o.fresh && !ranked[0]?.fits) return chooseCluster(placer, db, tenant, want, { ...o, fresh: true });
  let mayBorrow: boolean | undefined;
  for (const { cluster, fits } of ranked) {
    if (fits) return { type: 'place', target: { cluster, anchor }, slowPath: false };
    if (!(mayBorrow ??= await o.mayBorrow())) continue;
    const room = rooms.find((r) => r.cluster === cluster)!;
    if (await borrow(placer, db, { anchor, cluster }, roomShortfall(room, want), o.by)) return { type: 'place', target: { cluster, anchor }, slowPath: true };
  }
  const open = rooms.filter((r) => r.mode === 'open');
  return { type: 'none', clusters: open.map((room) => ({ cluster: room.cluster, resources: RESOURCE_NAMES.filter((r) => roomShortfall(room, want)[r] > 0) })) };
}

/**
 * The cluster for an admission leaving the queue, chosen inside its transaction from the anchor's
 * rows as they are now (read on the tenant's shard, unlocked: `reserveRoom` is the check): the first
 * in the policy's order that fits; null when none does. No slow path: the moves are sagas of their
 * own, outside any admission's transaction. `registered` was read before the transaction (the
 * global keyspace).
 */
export async function clusterInTx(tx: Queryable, placer: Placer, anchor: string, registered: boolean, tenant: string, want: Amounts): Promise<Target | null> {
  if (!registered) return UNREGISTERED;
  const rooms = await placer.rooms(tx, anchor, true);
  const affinity = placer.policy.readsAffinity ? await readAffinity(tx, tenant) : [];
  const first = placer.policy.rank({ want, rooms, affinity }).find((r) => r.fits);
  return first ? { cluster: first.cluster, anchor } : null;
}

const UNREGISTERED: Target = { cluster: UNREGISTERED_CLUSTER, anchor: null };

/**
 * Makes sure the room an admission holds takes `units` more of `one` (a PATCH increase: all of them;
 * a scale-up: as many as the cluster can give, `partial`), outside its transaction: borrows the
 * shortfall when its cluster's allotment on the anchor lacks it (read fresh) and `mayBorrow` agrees.
 * The transaction's guarded reserve stays the check; this only makes it likely to pass.
 */
export async function ensureRoom(
  placer: Placer,
  db: Db,
  room: Room,
  grow: { one: Amounts; units: number; partial: boolean },
  by: string,
  mayBorrow: () => Promise<boolean> = async () => true,
): Promise<void> {
  const [row] = await readAllotments(db, room.anchor, room.cluster);
  if (!row || !GROW_MODES.includes(row.mode)) return;
  const needFor = (units: number) => roomShortfall(row, amountsOf((r) => grow.one[r] * units));
  if (!anyPositive(needFor(grow.units)) || !(await mayBorrow())) return;
  const supply = await supplyFor(db, await placer.anchors(db), room);
  let units = grow.units;
  if (grow.partial) while (units > 0 && !supply.covers(needFor(units))) units--;
  if (units > 0 && anyPositive(needFor(units))) await borrowFrom(db, supply, room, needFor(units), by);
}

/**
 * The slow path: `need` more room for the cluster on the anchor. From the cluster's pool if it holds
 * all of it (a grant, ledger/allotment-moves.ts); otherwise, only if the pool and the other anchors'
 * free slack together cover it, that slack goes back to the pool first (reclaims, each bounded by its
 * anchor's slack) and the grant follows. Nothing moves when even that cannot cover it. True when the
 * grant went through (a concurrent admission may still take the room: the reserve decides).
 */
async function borrow(placer: Placer, db: Db, to: Room, need: Amounts, by: string): Promise<boolean> {
  return borrowRoom(db, await placer.anchors(db), to, need, by);
}

/** The slow path given the ledger's anchors (a caller without a placer: the operator's adopt). */
export async function borrowRoom(db: Db, anchors: readonly ShardAnchor[], to: Room, need: Amounts, by: string): Promise<boolean> {
  return borrowFrom(db, await supplyFor(db, anchors, to), to, need, by);
}

/** What a cluster can give an anchor: its pool and the other anchors' allotments (their free slack). */
interface Supply {
  pool: Amounts;
  others: AllotmentRow[];
  covers(need: Amounts): boolean;
}

async function supplyFor(db: Db, anchors: readonly ShardAnchor[], to: Room): Promise<Supply> {
  const pool = (await readCluster(db, to.cluster))?.pool ?? amountsOf(() => 0);
  const others = await readAllAllotments(db, anchors.filter((a) => a.anchor !== to.anchor), to.cluster);
  const total = amountsOf((r) => pool[r] + others.reduce((s, row) => s + Math.max(0, freeOf(row, r)), 0));
  return { pool, others, covers: (need) => RESOURCE_NAMES.every((r) => total[r] >= need[r]) };
}

async function borrowFrom(db: Db, supply: Supply, to: Room, need: Amounts, by: string): Promise<boolean> {
  if (!supply.covers(need)) return false;
  const move = (kind: string, anchor: string, want: Amounts) => ({ id: `${kind}:${to.cluster}:${anchor}:${crypto.randomUUID()}`, cluster: to.cluster, anchor, want, by });
  const now = () => new Date();
  let left = amountsOf((r) => Math.max(0, need[r] - supply.pool[r]));
  for (const row of supply.others) {
    const take = amountsOf((r) => Math.min(left[r], Math.max(0, freeOf(row, r))));
    if (!anyPositive(take)) continue;
    const applied = await reclaim(db, move('lend', row.anchor, take), now);
    left = amountsOf((r) => left[r] - applied[r]);
  }
  return (await grant(db, move('borrow', to.anchor, need), now)) === 'granted';
}

const guardRoom = RESOURCE_NAMES.map((r) => `reserved_${AMOUNT_COLUMNS[r]} + stranded_${AMOUNT_COLUMNS[r]} + ? <= allotted_${AMOUNT_COLUMNS[r]}`).join(' AND ');
const changeEach = (sign: '+' | '-') => RESOURCE_NAMES.map((r) => `reserved_${AMOUNT_COLUMNS[r]} = reserved_${AMOUNT_COLUMNS[r]} ${sign} ?`).join(', ');

/**
 * Reserves `amounts` on the cluster's allotment of the anchor, only while its mode is one of `modes`
 * and its room covers them (reserved + stranded + amounts ≤ allotted, every resource). Last in its
 * transaction (the allotment row is the hottest lock); false: the caller rolls back.
 */
export async function reserveRoom(tx: Queryable, t: Room, amounts: Amounts, modes: readonly AllotmentMode[], now: Date): Promise<boolean> {
  const r = await tx.execute(`UPDATE cluster_allotment SET ${changeEach('+')}, updated_at = ? WHERE anchor = ? AND cluster = ? AND mode IN (?) AND ${guardRoom}`, [
    ...amountArgs(amounts),
    now,
    t.anchor,
    t.cluster,
    modes,
    ...amountArgs(amounts),
  ]);
  return r.rowsAffected === 1;
}

/** The modes in which an admission already placed may grow (a PATCH increase, a scale-up): not lost or forgotten. */
export const GROW_MODES: readonly AllotmentMode[] = ['open', 'draining'];

/**
 * How many more units of `one` (one replica's amounts) the room takes, read under the allotment row's
 * lock (`FOR UPDATE`: the caller's reserve cannot then be refused): 0 when its mode forbids growing.
 */
export async function unitsRoomFits(tx: Queryable, t: Room, one: Amounts): Promise<number> {
  const room = await lockAllotment(tx, t.anchor, t.cluster);
  if (!room || !GROW_MODES.includes(room.mode)) return 0;
  let units = Number.MAX_SAFE_INTEGER;
  for (const r of RESOURCE_NAMES) if (one[r] > 0) units = Math.min(units, Math.floor(Math.max(0, freeOf(room, r)) / one[r]));
  return units;
}

/** The room a reservation row holds (`cluster`, `room_anchor` selected): null when it holds none. */
export const roomOfRow = (row: Row): Room | null =>
  row.room_anchor === null || row.room_anchor === undefined ? null : { anchor: str(row.room_anchor), cluster: str(row.cluster) };

/** Gives `amounts` back to the cluster's allotment of the anchor (a release, a refund); no row (the unregistered cluster) changes nothing. */
export async function freeRoom(tx: Queryable, t: Room, amounts: Amounts, now: Date): Promise<void> {
  await tx.execute(`UPDATE cluster_allotment SET ${changeEach('-')}, updated_at = ? WHERE anchor = ? AND cluster = ?`, [...amountArgs(amounts), now, t.anchor, t.cluster]);
}

const strandEach = RESOURCE_NAMES.map((r) => `reserved_${AMOUNT_COLUMNS[r]} = reserved_${AMOUNT_COLUMNS[r]} - ?, stranded_${AMOUNT_COLUMNS[r]} = stranded_${AMOUNT_COLUMNS[r]} + ?`).join(', ');
const unstrandEach = RESOURCE_NAMES.map((r) => `stranded_${AMOUNT_COLUMNS[r]} = stranded_${AMOUNT_COLUMNS[r]} - ?`).join(', ');

/** Room reserved on the allotment becomes stranded (a failover move leaves a lost cluster whose pods may still run). */
export async function strandRoom(tx: Queryable, t: Room, amounts: Amounts, now: Date): Promise<void> {
  await tx.execute(`UPDATE cluster_allotment SET ${strandEach}, updated_at = ? WHERE anchor = ? AND cluster = ?`, [...RESOURCE_NAMES.flatMap((r) => [amounts[r], amounts[r]]), now, t.anchor, t.cluster]);
}

/** Stranded room given back to the allotment (its placement freed once its pods are gone, or given up by `forget`). */
export async function unstrandRoom(tx: Queryable, t: Room, amounts: Amounts, now: Date): Promise<void> {
  await tx.execute(`UPDATE cluster_allotment SET ${unstrandEach}, updated_at = ? WHERE anchor = ? AND cluster = ?`, [...amountArgs(amounts), now, t.anchor, t.cluster]);
}
