// The ledger invariant checker: compares the MySQL ledger with the cluster and reports drift.
// Used by the tests after every crash scenario, and by operators (`npm run ledger:check`).
//   charged-once       every reservation has exactly one charge movement for its admission, and one
//                      more per accepted increase of its replicas (none for a decrease)
//   released-once      a released reservation has exactly one release movement; others none
//   balance            per resource, the movements add up to what the reservation holds: charges −
//                      refunds = its amounts while not released, charges − refunds − release = 0 after
//   usage              tenant_quota.used == Σ amounts of the tenant's charged reservations (neither
//                      released nor ever charged: queued, cancelled, expired)
//   never-charged      a queued, cancelled or expired reservation has no movement and no outbox row
//   queued-count       tenant_quota.queued == the tenant's queued reservations (on every quota row)
//   one-cr             a delivered/ready reservation has its CR, with the bound UID (on the cluster
//                      it is placed on, when given a client per cluster)
//   orphan-cr          every ModelService with an admission id belongs to a live reservation (placed
//                      on that cluster, when given a client per cluster)
//   released-pods      no pod of a released reservation is left
//   allotment-bounds   per shard's allotment of a cluster and resource: 0 ≤ reserved, 0 ≤ stranded,
//                      reserved + stranded ≤ allotted (docs/multi-cluster.md)
//   cluster-reserved   per shard's allotment of a cluster: reserved == Σ amounts of the charged
//                      reservations holding their room there (room_anchor, cluster); a charged
//                      reservation on a registered cluster holds a room, on an allotment that exists
//   cluster-stranded   per shard's allotment of a cluster: stranded == Σ held of the placements left
//                      there by a failover move and still `stranded` (ledger/failover-move.ts)
//   moved-once         a reservation at placement n has exactly n − 1 `move` movements, one per
//                      placement it moved to, and n − 1 placements left behind
//   cluster-capacity   per cluster and resource: pool + Σ allotted over the shards + the moves in
//                      flight (a grant taken from the pool and not yet on its shard, a reclaim taken
//                      from its shard and not yet back in the pool) = capacity
// `settled: false` skips the checks that hold only once the controller has converged
// (one-cr, orphan-cr, released-pods), and cluster-capacity, whose reads of the global keyspace and
// of the shards are not one snapshot (a move between them would look like drift); the money checks
// and allotment-bounds must hold at every instant.
// The ledger is read shard by shard (ledger/shards.ts): a tenant's rows all live on its shard,
// so every money check is a check within one shard.
import type { Db, Queryable } from '../../ledger/db.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { int, str, strOrNull } from '../../ledger/columns.ts';
import { addAmounts, AMOUNT_COLUMNS, amountColumns, amountsFromRow, amountsOf, prefixedAmountColumns } from '../../ledger/resources.ts';
import { moveLog, movesInFlight } from '../../ledger/allotment-moves.ts';
import { listClusters, readShardAllotments, sumOf, type AllotmentRow, type ClusterRow } from '../../ledger/cluster-store.ts';
import { LABELS, RESOURCE_NAMES, type Amounts, type ModelService } from '../../schema/model-service.ts';
import { holdsCharge, NEVER_CHARGED_STATES } from '../../schema/admission.ts';
import { clusterPaths, KubeClient } from '../../controller/runtime/kube.ts';

export interface Drift {
  check: 'charged-once' | 'released-once' | 'balance' | 'usage' | 'never-charged' | 'queued-count' | 'one-cr' | 'orphan-cr' | 'released-pods' | 'allotment-bounds' | 'cluster-reserved' | 'cluster-stranded' | 'moved-once' | 'cluster-capacity';
  reservation?: string;
  cluster?: string;
  tenant?: string;
  detail: string;
}

interface ResRow {
  id: string;
  tenant: string;
  state: string;
  amounts: Record<(typeof RESOURCE_NAMES)[number], number>;
  charges: number;
  /** Every movement, of any direction. */
  movements: number;
  outboxRows: number;
  increases: number;
  releases: number;
  /** Σ charge − Σ refund − Σ release, per resource. */
  net: Record<(typeof RESOURCE_NAMES)[number], number>;
  boundUid: string | null;
  /** The bound CR as `<namespace>/<name>`. */
  crKey: string | null;
  cluster: string;
  /** The anchor whose allotment holds its room (null: none). */
  roomAnchor: string | null;
  /** reservation.placement_seq, its `move` movements and the placements it left. */
  placementSeq: number;
  moves: number;
  left: number;
}

/**
 * `instance`: the installation whose cluster objects are compared (the controller's INSTANCE,
 * label modeldock.io/instance), or undefined for every ModelService and pod with an admission
 * id in the cluster — tenants' objects live in namespaces of their own (controller/tenant/space.ts).
 */
/**
 * `kube`: the cluster every admission is placed on (a single-cluster install), or one client per
 * registered cluster, by name (each compared with the admissions placed on it), or null: the
 * ledger's own checks only.
 */
export async function checkLedger(
  db: Db,
  kube: KubeClient | ReadonlyMap<string, KubeClient> | null,
  instance: string | undefined,
  o: { settled?: boolean } = {},
): Promise<Drift[]> {
  const drift: Drift[] = [];
  const rows: ResRow[] = [];
  const allotments: AllotmentRow[] = [];
  const clusters = await listClusters(db);
  const registered = new Set(clusters.map((c) => c.name));
  for (const shard of await ledgerShards(db)) {
    const shardRows = await checkShard(shard.db, drift);
    const shardAllotments = await readShardAllotments(shard.db);
    drift.push(...clusterReserved(shardRows, shardAllotments, registered));
    drift.push(...clusterStranded(await readStranded(shard.db), shardAllotments));
    rows.push(...shardRows);
    allotments.push(...shardAllotments);
  }
  drift.push(...allotmentBounds(allotments));
  if (o.settled !== false) drift.push(...(await clusterCapacity(db, clusters, allotments)));
  if (!kube || o.settled === false) return drift;
  if (kube instanceof KubeClient) return [...drift, ...(await checkCluster(rows, kube, instance))];
  for (const [cluster, client] of kube) drift.push(...(await checkCluster(rows.filter((r) => r.cluster === cluster), client, instance)));
  return drift;
}

/** The money checks of one shard (every tenant's rows are on its shard); returns its reservations. */
async function checkShard(db: Queryable, drift: Drift[]): Promise<ResRow[]> {
  const res = await db.execute(
    `SELECT r.id, r.tenant, r.state, ${amountColumns('r')}, r.cluster, r.room_anchor, r.placement_seq, b.uid, b.namespace, b.cr_name,
            (SELECT COUNT(*) FROM quota_movement m WHERE m.tenant = r.tenant AND m.reservation_id = r.id AND m.direction = 'move') AS moves,
            (SELECT COUNT(*) FROM placement p WHERE p.tenant = r.tenant AND p.reservation_id = r.id) AS left_behind,
            (SELECT COUNT(*) FROM quota_movement m WHERE m.tenant = r.tenant AND m.reservation_id = r.id AND m.direction = 'charge') AS charges,
            (SELECT COUNT(*) FROM quota_movement m WHERE m.tenant = r.tenant AND m.reservation_id = r.id AND m.direction = 'release') AS releases,
            (SELECT COUNT(*) FROM quota_movement m WHERE m.tenant = r.tenant AND m.reservation_id = r.id) AS movements,
            (SELECT COUNT(*) FROM outbox o WHERE o.tenant = r.tenant AND o.reservation_id = r.id) AS outbox_rows,
            (SELECT COUNT(*) FROM reservation_change c WHERE c.tenant = r.tenant AND c.reservation_id = r.id AND c.to_replicas > c.from_replicas) AS increases,
            ${RESOURCE_NAMES.map(
              (name) =>
                `(SELECT COALESCE(SUM(CASE m.direction WHEN 'charge' THEN m.${AMOUNT_COLUMNS[name]} WHEN 'refund' THEN -m.${AMOUNT_COLUMNS[name]} WHEN 'release' THEN -m.${AMOUNT_COLUMNS[name]} ELSE 0 END), 0)
                  FROM quota_movement m WHERE m.tenant = r.tenant AND m.reservation_id = r.id) AS net_${AMOUNT_COLUMNS[name]}`,
            ).join(', ')}
       FROM reservation r LEFT JOIN binding b ON b.tenant = r.tenant AND b.reservation_id = r.id`,
  );
  const rows: ResRow[] = res.rows.map((r) => ({
    id: str(r.id),
    tenant: str(r.tenant),
    state: str(r.state),
    amounts: amountsFromRow(r),
    charges: int(r.charges),
    movements: int(r.movements),
    outboxRows: int(r.outbox_rows),
    increases: int(r.increases),
    releases: int(r.releases),
    net: amountsFromRow(r, 'net_'),
    boundUid: r.uid === null || r.uid === undefined ? null : str(r.uid),
    crKey: r.cr_name === null || r.cr_name === undefined ? null : `${str(r.namespace)}/${str(r.cr_name)}`,
    cluster: str(r.cluster),
    roomAnchor: strOrNull(r.room_anchor),
    placementSeq: int(r.placement_seq),
    moves: int(r.moves),
    left: int(r.left_behind),
  }));

  const expected = new Map<string, number>();
  const queuedOf = new Map<string, number>();
  for (const r of rows) {
    if ((NEVER_CHARGED_STATES as readonly string[]).includes(r.state)) {
      if (r.movements !== 0 || r.outboxRows !== 0) {
        drift.push({ check: 'never-charged', reservation: r.id, detail: `state ${r.state} with ${r.movements} movements and ${r.outboxRows} outbox rows` });
      }
      if (r.state === 'queued') queuedOf.set(r.tenant, (queuedOf.get(r.tenant) ?? 0) + 1);
      continue;
    }
    if (r.charges !== 1 + r.increases) {
      drift.push({ check: 'charged-once', reservation: r.id, detail: `${r.charges} charge movements for 1 admission and ${r.increases} increases` });
    }
    const holds = (name: (typeof RESOURCE_NAMES)[number]) => (r.state === 'released' ? 0 : r.amounts[name]);
    const off = RESOURCE_NAMES.filter((name) => r.net[name] !== holds(name));
    if (off.length > 0) {
      drift.push({ check: 'balance', reservation: r.id, detail: off.map((name) => `${name}: movements net ${r.net[name]}, reservation holds ${holds(name)}`).join('; ') });
    }
    if (r.moves !== r.placementSeq - 1 || r.left !== r.placementSeq - 1) {
      drift.push({ check: 'moved-once', reservation: r.id, detail: `placement ${r.placementSeq} with ${r.moves} move movements and ${r.left} placements left` });
    }
    const wantReleases = r.state === 'released' ? 1 : 0;
    if (r.releases !== wantReleases) {
      drift.push({ check: 'released-once', reservation: r.id, detail: `state ${r.state} with ${r.releases} release movements` });
    }
    if (r.state !== 'released') {
      for (const name of RESOURCE_NAMES) {
        const k = `${r.tenant}\u0000${name}`;
        expected.set(k, (expected.get(k) ?? 0) + r.amounts[name]);
      }
    }
  }
  const quota = await db.execute('SELECT tenant, resource, used, queued FROM tenant_quota');
  const seen = new Set<string>();
  for (const q of quota.rows) {
    const queued = queuedOf.get(str(q.tenant)) ?? 0;
    if (int(q.queued) !== queued) {
      drift.push({ check: 'queued-count', tenant: str(q.tenant), detail: `${str(q.resource)}: queued ${int(q.queued)}, reservations queued ${queued}` });
    }
    const k = `${str(q.tenant)}\u0000${str(q.resource)}`;
    seen.add(k);
    const want = expected.get(k) ?? 0;
    if (int(q.used) !== want) {
      drift.push({ check: 'usage', tenant: str(q.tenant), detail: `${str(q.resource)}: used ${int(q.used)}, reservations hold ${want}` });
    }
  }
  for (const [k, want] of expected) {
    if (want !== 0 && !seen.has(k)) drift.push({ check: 'usage', tenant: k.split('\u0000')[0], detail: `no quota row holds ${want}` });
  }
  return rows;
}

function allotmentBounds(rows: readonly AllotmentRow[]): Drift[] {
  return rows.flatMap((a) => {
    const off = RESOURCE_NAMES.filter((r) => a.reserved[r] < 0 || a.stranded[r] < 0 || a.reserved[r] + a.stranded[r] > a.allotted[r]);
    return off.length === 0
      ? []
      : [{ check: 'allotment-bounds' as const, cluster: a.cluster, detail: `anchor ${a.anchor}: ${off.map((r) => `${r}: reserved ${a.reserved[r]} + stranded ${a.stranded[r]}, allotted ${a.allotted[r]}`).join('; ')}` }];
  });
}

/** One shard: each allotment's reserved is what its reservations hold there, and each charged reservation on a registered cluster holds a room. */
function clusterReserved(rows: readonly ResRow[], allotments: readonly AllotmentRow[], registered: ReadonlySet<string>): Drift[] {
  const drift: Drift[] = [];
  const key = (anchor: string, cluster: string) => `${anchor}\u0000${cluster}`;
  const held = new Map<string, Record<(typeof RESOURCE_NAMES)[number], number>>();
  for (const r of rows.filter((row) => holdsCharge(row.state))) {
    if (r.roomAnchor === null) {
      if (registered.has(r.cluster)) drift.push({ check: 'cluster-reserved', reservation: r.id, cluster: r.cluster, detail: `charged on registered cluster ${r.cluster} without a room` });
      continue;
    }
    const k = key(r.roomAnchor, r.cluster);
    held.set(k, addAmounts(held.get(k) ?? amountsOf(() => 0), r.amounts));
  }
  for (const a of allotments) {
    const want = held.get(key(a.anchor, a.cluster)) ?? amountsOf(() => 0);
    held.delete(key(a.anchor, a.cluster));
    const off = RESOURCE_NAMES.filter((r) => a.reserved[r] !== want[r]);
    if (off.length > 0) drift.push({ check: 'cluster-reserved', cluster: a.cluster, detail: `anchor ${a.anchor}: ${off.map((r) => `${r}: reserved ${a.reserved[r]}, reservations hold ${want[r]}`).join('; ')}` });
  }
  for (const k of held.keys()) {
    const [anchor, cluster] = k.split('\u0000');
    drift.push({ check: 'cluster-reserved', cluster, detail: `reservations hold room on anchor ${anchor}, which has no allotment of the cluster` });
  }
  return drift;
}

/** One shard's stranded placements: what each holds on the allotment (anchor, cluster) it left. */
async function readStranded(db: Queryable): Promise<Array<{ anchor: string; cluster: string; held: Amounts }>> {
  const r = await db.execute(`SELECT anchor, cluster, ${prefixedAmountColumns('held')} FROM placement WHERE state = 'stranded'`);
  return r.rows.map((row) => ({ anchor: str(row.anchor), cluster: str(row.cluster), held: amountsFromRow(row, 'held_') }));
}

/** One shard: each allotment's stranded is what the placements stranded on it hold. */
function clusterStranded(stranded: ReadonlyArray<{ anchor: string; cluster: string; held: Amounts }>, allotments: readonly AllotmentRow[]): Drift[] {
  return allotments.flatMap((a) => {
    const want = stranded.filter((p) => p.anchor === a.anchor && p.cluster === a.cluster).reduce((sum, p) => addAmounts(sum, p.held), amountsOf(() => 0));
    const off = RESOURCE_NAMES.filter((r) => a.stranded[r] !== want[r]);
    return off.length === 0 ? [] : [{ check: 'cluster-stranded' as const, cluster: a.cluster, detail: `anchor ${a.anchor}: ${off.map((r) => `${r}: stranded ${a.stranded[r]}, stranded placements hold ${want[r]}`).join('; ')}` }];
  });
}

async function clusterCapacity(db: Db, clusters: readonly ClusterRow[], allotments: readonly AllotmentRow[]): Promise<Drift[]> {
  const inFlight = await movesInFlight(db, (anchor, id) => moveLog(db, anchor, id));
  return clusters.flatMap((c) => {
    const allotted = sumOf(allotments.filter((a) => a.cluster === c.name), 'allotted');
    const moving = inFlight.filter((m) => m.cluster === c.name).reduce((s, m) => addAmounts(s, m.amounts), amountsOf(() => 0));
    const held = amountsOf((r) => c.pool[r] + allotted[r] + moving[r]);
    const off = RESOURCE_NAMES.filter((r) => held[r] !== c.capacity[r]);
    return off.length === 0 ? [] : [{ check: 'cluster-capacity' as const, cluster: c.name, detail: off.map((r) => `${r}: pool + allotted + in flight = ${held[r]}, capacity ${c.capacity[r]}`).join('; ') }];
  });
}

/** The checks that compare the ledger with the cluster (they hold once the controller has converged). */
async function checkCluster(rows: readonly ResRow[], kube: KubeClient, instance: string | undefined): Promise<Drift[]> {
  const drift: Drift[] = [];
  const labelSelector = [LABELS.admissionId, ...(instance ? [`${LABELS.instance}=${instance}`] : [])].join(',');
  const crs = (await kube.list<ModelService>(clusterPaths.modelServices, { labelSelector })).items;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const crByKey = new Map(crs.map((c) => [`${c.metadata.namespace ?? ''}/${c.metadata.name}`, c]));
  for (const r of rows) {
    if (r.state !== 'delivered' && r.state !== 'ready') continue;
    const cr = r.crKey ? crByKey.get(r.crKey) : undefined;
    if (!cr) drift.push({ check: 'one-cr', reservation: r.id, detail: `no ModelService ${r.crKey ?? '(unbound)'}` });
    else if (cr.metadata.uid !== r.boundUid) drift.push({ check: 'one-cr', reservation: r.id, detail: `UID ${cr.metadata.uid} ≠ bound ${r.boundUid}` });
  }
  for (const cr of crs) {
    const id = cr.metadata.labels?.[LABELS.admissionId] ?? '';
    const r = byId.get(id);
    if (!r || !holdsCharge(r.state)) {
      drift.push({ check: 'orphan-cr', reservation: id, detail: `ModelService ${cr.metadata.name} has no live reservation (${r?.state ?? 'none'})` });
    }
  }
  const pods = (await kube.list<{ metadata: { name: string; labels?: Record<string, string> } }>(clusterPaths.pods, { labelSelector })).items;
  for (const p of pods) {
    const id = p.metadata.labels?.[LABELS.admissionId] ?? '';
    if (byId.get(id)?.state === 'released') {
      drift.push({ check: 'released-pods', reservation: id, detail: `pod ${p.metadata.name} still exists` });
    }
  }
  return drift;
}
