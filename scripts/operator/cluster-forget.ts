// The operator's `forget` (`npm run cluster -- forget <name> --reason "…"`; docs/multi-cluster.md T10):
// an operator gives a lost cluster up for good, vouching that nothing of it runs any more. One global
// transaction makes it `forgotten` (epoch + 1: a controller of it that still runs is superseded, and a
// takeover is refused from then on) with its audit row; then every shard follows:
//  - its mode becomes `forgotten` (no placement, no growth);
//  - each placement stranded there is given up: `stranded → forgotten` with the reason, its room no
//    longer stranded (one transaction each, guarded by its state);
//  - each admission still placed there in `deleting` or `releasing` (they never move) is released,
//    with a `release` movement whose note is the reason (its primary key refuses a second);
//  - running ones are moved by the supervisors (ledger/failover-move.ts: from a forgotten cluster the
//    room is freed, not stranded).
// Every step is guarded, so a re-run (after a crash, or to finish) changes only what is left.
// Not fenced: it is the operator's write, as the conflict resolution is.
import { ledgerAnchors } from '../../ledger/anchors.ts';
import { anyPositive, forgetTransition, type ClusterState } from '../../ledger/clusters.ts';
import { CLUSTER_COLUMNS, clusterFromRow, readAllAllotments, sumOf, syncModes, writeAudit, type ClusterRow } from '../../ledger/cluster-store.ts';
import { str } from '../../ledger/columns.ts';
import type { Db } from '../../ledger/db.ts';
import { freeRoom, unstrandRoom } from '../../ledger/placement.ts';
import { ledgerShards, shardDb } from '../../ledger/shards.ts';
import { commitOrRollback } from '../../controller/reservation/commit-or-rollback.ts';
import type { ReservationKey } from '../../controller/reservation/key.ts';
import { placementsLeft, type LeftPlacement } from '../../controller/reservation/leftover.ts';
import { currentCharge, giveBackUsage, insertMovements } from '../../controller/reservation/quota-moves.ts';
import { strandedPage } from '../../controller/reservation/record.ts';
import { ClusterRefused, mustRead, type AdminContext } from './cluster-admin.ts';

export interface ForgetResult {
  cluster: ClusterRow;
  changed: boolean;
  from: ClusterState;
  /** Stranded placements given up, and deleting/releasing admissions released, by this run. */
  strandedForgotten: number;
  released: number;
}

const PAGE = 200;

export async function forgetCluster(ctx: AdminContext, o: { name: string; reason: string }): Promise<ForgetResult> {
  const reason = o.reason.trim();
  if (reason === '') throw new ClusterRefused(`forget ${o.name}: a reason is required`);
  const anchors = await ledgerAnchors(ctx.db);
  const rows = await readAllAllotments(ctx.db, anchors, o.name);
  const facts = { reservedAny: anyPositive(sumOf(rows, 'reserved')), strandedAny: anyPositive(sumOf(rows, 'stranded')) };
  const now = ctx.now();
  const decided = await ctx.db.transaction(async (tx) => {
    const row = (await tx.execute(`SELECT ${CLUSTER_COLUMNS} FROM cluster WHERE name = ? FOR UPDATE`, [o.name])).rows[0];
    if (!row) throw new ClusterRefused(`no cluster named ${o.name}`);
    const c = clusterFromRow(row);
    const decision = forgetTransition(c.state, facts);
    if (decision.kind === 'refused') throw new ClusterRefused(`forget ${o.name}: ${decision.reason}`);
    if (decision.kind === 'unchanged') return { changed: false, from: c.state };
    await tx.execute("UPDATE cluster SET state = 'forgotten', epoch = epoch + 1, version = version + 1, state_changed_at = ?, updated_at = ? WHERE name = ?", [now, now, o.name]);
    await writeAudit(tx, { cluster: o.name, action: 'forget', actor: ctx.actor, reason, epoch: c.epoch + 1, detail: { from: c.state, to: 'forgotten' }, at: now });
    return { changed: true, from: c.state };
  });
  const cluster = await mustRead(ctx.db, o.name);
  await syncModes(ctx.db, anchors, cluster, ctx.now());
  let strandedForgotten = 0;
  let released = 0;
  const note = `forgotten: ${reason}`.slice(0, 1000);
  for (const shard of await ledgerShards(ctx.db)) {
    const one = shardDb(ctx.db, shard.name);
    for (let after: ReservationKey | null = null; ; ) {
      const keys = await strandedPage(one, { cluster: o.name, after, limit: PAGE });
      for (const key of keys) {
        for (const p of await placementsLeft(ctx.db, key, o.name)) if (p.state === 'stranded' && (await forgetStranded(ctx.db, key, o.name, p, note, ctx.now()))) strandedForgotten++;
      }
      if (keys.length < PAGE) break;
      after = keys.at(-1)!;
    }
    for (;;) {
      const r = await one.execute(`SELECT tenant, id FROM reservation WHERE cluster = ? AND state IN ('deleting', 'releasing') ORDER BY id LIMIT ${PAGE}`, [o.name]);
      let done = 0;
      for (const row of r.rows) if (await releaseOnForgotten(ctx.db, { tenant: str(row.tenant), id: str(row.id) }, o.name, note, ctx.now())) done++;
      released += done;
      if (r.rows.length < PAGE || done === 0) break;
    }
  }
  return { cluster: await mustRead(ctx.db, o.name), ...decided, strandedForgotten, released };
}

/** stranded → forgotten, and the room no longer stranded, in ONE transaction guarded by the placement's state. */
async function forgetStranded(db: Db, key: ReservationKey, cluster: string, p: LeftPlacement, note: string, now: Date): Promise<boolean> {
  return commitOrRollback(db, async (tx, rollback) => {
    const given = await tx.execute(
      `UPDATE placement SET state = 'forgotten', freed_at = ?, freed_reason = ? WHERE tenant = ? AND reservation_id = ? AND seq = ? AND cluster = ? AND state = 'stranded'`,
      [now, note.slice(0, 255), key.tenant, key.id, p.seq, cluster],
    );
    if (given.rowsAffected !== 1) return rollback(false);
    await unstrandRoom(tx, { anchor: p.anchor, cluster }, p.held, now);
    return true;
  });
}

/** deleting|releasing → released on the forgotten cluster: the release movement (noted), usage and the room given back. */
async function releaseOnForgotten(db: Db, key: ReservationKey, cluster: string, note: string, now: Date): Promise<boolean> {
  return commitOrRollback(db, async (tx, rollback) => {
    const moved = await tx.execute(
      `UPDATE reservation SET state = 'released', state_changed_at = ?, updated_at = ?, last_error = ?,
              release_blocked_since = NULL, release_blocked_reason = NULL, release_blocked_pods = NULL, release_blocked_finalizers = NULL
        WHERE tenant = ? AND id = ? AND cluster = ? AND state IN ('deleting', 'releasing')`,
      [now, now, note, key.tenant, key.id, cluster],
    );
    if (moved.rowsAffected !== 1) return rollback(false);
    const charge = await currentCharge(tx, key);
    if (!charge) return rollback(false);
    await insertMovements(tx, key, charge.generation, [{ direction: 'release', amounts: charge.amounts, note }], now);
    await giveBackUsage(tx, key.tenant, charge.amounts, now);
    if (charge.room) await freeRoom(tx, charge.room, charge.amounts, now);
    return true;
  });
}
