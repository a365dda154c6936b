// A cluster's own controller and its row in `cluster` (docs/multi-cluster.md "Cluster states,
// epochs and who writes them"): the one writer of the takeover (a new epoch; joining → ready) and
// of the heartbeat. Both statements are in the global keyspace and compare against the database's
// clock (UTC_TIMESTAMP(3)), never a controller's own, so the lease is judged by one clock.
import { ledgerAnchors } from './anchors.ts';
import { clusterState, takeoverTransition, type ClusterState } from './clusters.ts';
import { CLUSTER_COLUMNS, clusterFromRow, syncModes, writeAudit } from './cluster-store.ts';
import { int, str } from './columns.ts';
import type { Db, Queryable } from './db.ts';

export type Takeover =
  | { kind: 'taken'; epoch: number; state: ClusterState; leaseMs: number; joined: boolean }
  | { kind: 'refused'; reason: string };

/**
 * Takes `cluster` over for `holder`: in one global transaction the row is locked, its epoch bumped,
 * holder and heartbeat set, and a joining cluster becomes ready with its `joined` audit row. Then
 * every shard's allotment follows the state (syncModes: a joining cluster's closed allotments
 * open). Refused, writing nothing, for a cluster that is not registered or was forgotten.
 * A crash after the commit leaves the modes behind; the next takeover syncs them (syncModes is
 * keyed by version, so a re-run changes nothing else).
 */
export async function acquireClusterEpoch(db: Db, o: { cluster: string; holder: string; now: Date }): Promise<Takeover> {
  let version = 0;
  const taken = await db.transaction(async (tx): Promise<Takeover> => {
    const row = (await tx.execute(`SELECT ${CLUSTER_COLUMNS} FROM cluster WHERE name = ? FOR UPDATE`, [o.cluster])).rows[0];
    if (!row) return { kind: 'refused', reason: `no cluster named ${o.cluster} (npm run cluster -- add ${o.cluster} …)` };
    const c = clusterFromRow(row);
    const decision = takeoverTransition(c.state);
    if (decision.kind === 'refused') return decision;
    const epoch = c.epoch + 1;
    await tx.execute(
      `UPDATE cluster SET epoch = ?, holder = ?, heartbeat_at = UTC_TIMESTAMP(3), heartbeat_by = ?, state = ?, version = version + ?,
         state_changed_at = IF(?, ?, state_changed_at), updated_at = ? WHERE name = ?`,
      [epoch, o.holder, o.holder, decision.to, decision.joined ? 1 : 0, decision.joined, o.now, o.now, o.cluster],
    );
    version = c.version + (decision.joined ? 1 : 0);
    if (decision.joined) await writeAudit(tx, { cluster: o.cluster, action: 'joined', actor: o.holder, epoch, detail: { from: c.state, to: decision.to }, at: o.now });
    return { kind: 'taken', epoch, state: decision.to, leaseMs: c.leaseMs, joined: decision.joined };
  });
  // The shards follow the state this takeover committed (a later change syncs its own, and a mode never goes back).
  if (taken.kind === 'taken') await syncModes(db, await ledgerAnchors(db), { name: o.cluster, state: taken.state, version }, o.now);
  return taken;
}

export type Beat = { kind: 'renewed' } | { kind: 'superseded'; epoch: number | null; state: ClusterState | null };

/**
 * The leader's heartbeat at `epoch`: `heartbeat_at` set to the database's now, only while the
 * cluster is still at that epoch. 0 rows changed is read back: at the same epoch (a heartbeat
 * within the same millisecond changes nothing) it is renewed; otherwise another takeover, the
 * supervisor's `lost` or the operator bumped the epoch (or removed the row) and this holder is
 * superseded: it must stop and take the cluster over again.
 */
export async function heartbeat(q: Queryable, o: { cluster: string; epoch: number; holder: string }): Promise<Beat> {
  const r = await q.execute("UPDATE cluster SET heartbeat_at = UTC_TIMESTAMP(3), heartbeat_by = ? WHERE name = ? AND epoch = ? AND state <> 'forgotten'", [
    o.holder,
    o.cluster,
    o.epoch,
  ]);
  if (r.rowsAffected > 0) return { kind: 'renewed' };
  const row = (await q.execute('SELECT epoch, state FROM cluster WHERE name = ?', [o.cluster])).rows[0];
  if (!row) return { kind: 'superseded', epoch: null, state: null };
  const c = { epoch: int(row.epoch), state: clusterState(str(row.state)) };
  return c.epoch === o.epoch && c.state !== 'forgotten' ? { kind: 'renewed' } : { kind: 'superseded', ...c };
}
