// The supervisor's half of failover (docs/multi-cluster.md T6, "Mark lost"): the one writer of
// `ready|draining → lost`. Every controller leader runs it (controller/cluster/supervisor.ts), so a
// cluster whose own controller stopped is judged by the others. Heartbeat age and lease are compared
// on the database's clock (the global keyspace's one server), never a runner's own; the Worker's cron
// runs it too (functions/services/sweep.ts), the net when no controller runs. A lost cluster takes
// no new placements; the supervisors then move its running admissions elsewhere
// (ledger/failover-move.ts, T7).
import { ledgerAnchors } from './anchors.ts';
import { clusterState, lostTransition, type ClusterState } from './clusters.ts';
import { syncModes, writeAudit } from './cluster-store.ts';
import { int, intOrNull, str } from './columns.ts';
import type { Db, Queryable } from './db.ts';

/** The heartbeat's age in ms by the database's clock (NULL: never sent one). */
const HEARTBEAT_AGE = 'TIMESTAMPDIFF(MICROSECOND, heartbeat_at, UTC_TIMESTAMP(3)) DIV 1000';

export interface Overdue {
  name: string;
  /** The epoch it was seen at: markLost changes it only while it is still this one. */
  epoch: number;
}

/** Ready or draining clusters whose heartbeat is older than their lease (one global read). */
export async function overdueClusters(q: Queryable): Promise<Overdue[]> {
  const r = await q.execute(
    `SELECT name, epoch FROM cluster
      WHERE state IN ('ready', 'draining') AND heartbeat_at < TIMESTAMPADD(MICROSECOND, -lease_ms * 1000, UTC_TIMESTAMP(3))
      ORDER BY name`,
  );
  return r.rows.map((row) => ({ name: str(row.name), epoch: int(row.epoch) }));
}

/** A lost or forgotten cluster, with the state's version its shards follow (syncModes). */
export interface Leaving extends Overdue {
  state: ClusterState;
  version: number;
}

/** The lost and forgotten clusters, with their epoch (one global read): the supervisors move their running admissions elsewhere. */
export async function clustersToLeave(q: Queryable): Promise<Leaving[]> {
  const r = await q.execute("SELECT name, epoch, state, version FROM cluster WHERE state IN ('lost', 'forgotten') ORDER BY name");
  return r.rows.map((row) => ({ name: str(row.name), epoch: int(row.epoch), state: clusterState(str(row.state)), version: int(row.version) }));
}

/**
 * Every cluster's shards brought to its state (syncModes, keyed by version: a shard already there
 * is not written): the roll-forward of a state change whose process died between its global commit
 * and its shards (a takeover, `lost`, the operator's commands). One global read, then one statement
 * per shard and cluster, for as many clusters as `budget` statements allow. Returns the statements
 * spent and the allotment rows changed.
 */
export async function rollModesForward(db: Db, now: Date, budget: number): Promise<{ statements: number; changed: number }> {
  if (budget < 1) return { statements: 0, changed: 0 };
  const clusters = (await db.execute('SELECT name, state, version FROM cluster ORDER BY name')).rows.map((r) => ({ name: str(r.name), state: clusterState(str(r.state)), version: int(r.version) }));
  let statements = 1;
  let changed = 0;
  if (clusters.length === 0) return { statements, changed };
  const anchors = await ledgerAnchors(db);
  statements++;
  for (const c of clusters) {
    if (statements + anchors.length > budget) break;
    changed += await syncModes(db, anchors, c, now);
    statements += anchors.length;
  }
  return { statements, changed };
}

export type MarkLost = { kind: 'lost'; epoch: number; heartbeatAgeMs: number } | { kind: 'unchanged'; why: string };

/**
 * Marks `cluster` lost if it still deserves it: in one global transaction the row is locked and
 * judged (lostTransition, with the heartbeat's age read under the lock), then `state = 'lost'`,
 * epoch + 1, version + 1 and the `lost` audit row naming the runner. Then every shard's allotment
 * follows (mode `lost`: no new placement there). Racing runners: the row lock orders them, and the
 * epoch they saw stops every one after the first.
 */
export async function markLost(db: Db, o: { cluster: string; seenEpoch: number; runner: string; now: Date; afterCommit?: () => void }): Promise<MarkLost> {
  let version = 0;
  const result = await db.transaction(async (tx): Promise<MarkLost> => {
    const row = (await tx.execute(`SELECT state, epoch, version, lease_ms, ${HEARTBEAT_AGE} AS age_ms FROM cluster WHERE name = ? FOR UPDATE`, [o.cluster])).rows[0];
    if (!row) return { kind: 'unchanged', why: 'not registered' };
    const facts = { state: clusterState(str(row.state)), epoch: int(row.epoch), leaseMs: int(row.lease_ms), heartbeatAgeMs: intOrNull(row.age_ms) };
    const decision = lostTransition(facts, o.seenEpoch);
    if (decision.kind === 'unchanged') return decision;
    await tx.execute("UPDATE cluster SET state = 'lost', epoch = ?, version = version + 1, state_changed_at = ?, updated_at = ? WHERE name = ?", [decision.epoch, o.now, o.now, o.cluster]);
    version = int(row.version) + 1;
    const heartbeatAgeMs = facts.heartbeatAgeMs ?? 0;
    await writeAudit(tx, {
      cluster: o.cluster,
      action: 'lost',
      actor: o.runner,
      reason: `no heartbeat for ${heartbeatAgeMs} ms (lease ${facts.leaseMs} ms)`,
      epoch: decision.epoch,
      detail: { from: facts.state, to: 'lost', heartbeatAgeMs, leaseMs: facts.leaseMs },
      at: o.now,
    });
    return { kind: 'lost', epoch: decision.epoch, heartbeatAgeMs };
  });
  if (result.kind === 'lost') o.afterCommit?.();
  if (result.kind === 'lost') await syncModes(db, await ledgerAnchors(db), { name: o.cluster, state: 'lost', version }, o.now);
  return result;
}
