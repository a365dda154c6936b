// The operator's `npm run cluster -- adopt <name>` (docs/multi-cluster.md, "Upgrade"): admissions
// charged before any cluster was registered run on the unregistered cluster `default` and hold no
// room. Registering that cluster (`add default …`) and adopting them gives each a room on its
// tenant's anchor, so the cluster's capacity counts what already runs there. Per shard, one
// transaction: the charged admissions of the cluster without a room, locked; their room set; their
// sum reserved on the shard's allotment (guarded: reserved + stranded ≤ allotted). A shortfall is
// borrowed first, from the pool or the other shards' free slack (the grant and reclaim sagas); a
// capacity that cannot cover what runs is refused, that shard unchanged. Re-runnable: a re-run adopts
// what is still without a room (an admission an old Worker charged meanwhile) and nothing twice; one
// audit row for a run that adopted any.
import { UNCHARGED_STATES } from '../../schema/admission.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { ledgerAnchors, type ShardAnchor } from '../../ledger/anchors.ts';
import { anyPositive } from '../../ledger/clusters.ts';
import { readAllotments, readCluster, writeAudit } from '../../ledger/cluster-store.ts';
import { str } from '../../ledger/columns.ts';
import type { Queryable } from '../../ledger/db.ts';
import { borrowRoom, reserveRoom } from '../../ledger/placement.ts';
import { roomShortfall } from '../../ledger/placement-policy.ts';
import { addAmounts, amountColumns, amountsFromRow, amountsOf, RESOURCE_NAMES } from '../../ledger/resources.ts';
import { ClusterRefused, type AdminContext } from './cluster-admin.ts';

/** Every allotment mode but forgotten: the admissions run there whatever the cluster's state. */
const ADOPT_MODES = ['closed', 'open', 'draining', 'lost'] as const;

export interface AdoptResult {
  /** Admissions given a room, per anchor (only anchors with any). */
  anchors: Array<{ anchor: string; admissions: number; amounts: Amounts }>;
}

/** The charged admissions of `cluster` on one shard that hold no room (`lock`: under FOR UPDATE). */
async function unplaced(q: Queryable, cluster: string, lock: boolean): Promise<Array<{ id: string; tenant: string; amounts: Amounts }>> {
  const r = await q.execute(
    `SELECT id, tenant, ${amountColumns()} FROM reservation WHERE cluster = ? AND room_anchor IS NULL AND state NOT IN (?)${lock ? ' FOR UPDATE' : ''}`,
    [cluster, UNCHARGED_STATES],
  );
  return r.rows.map((row) => ({ id: str(row.id), tenant: str(row.tenant), amounts: amountsFromRow(row) }));
}

const sum = (rows: ReadonlyArray<{ amounts: Amounts }>): Amounts => rows.reduce((s, r) => addAmounts(s, r.amounts), amountsOf(() => 0));

export async function adoptAdmissions(ctx: AdminContext, o: { name: string; reason?: string }): Promise<AdoptResult> {
  const cluster = await readCluster(ctx.db, o.name);
  if (!cluster) throw new ClusterRefused(`no cluster named ${o.name} (add it first)`);
  if (cluster.state === 'forgotten') throw new ClusterRefused(`${o.name} is forgotten: add it again`);
  const adopted: AdoptResult['anchors'] = [];
  const anchors = await ledgerAnchors(ctx.db);
  for (const a of anchors) {
    const n = await adoptOnShard(ctx, anchors, a, o.name);
    if (n) adopted.push(n);
  }
  if (adopted.length > 0) {
    const detail = { admissions: adopted.reduce((s, x) => s + x.admissions, 0), amounts: sum(adopted) };
    await ctx.db.transaction((tx) => writeAudit(tx, { cluster: o.name, action: 'adopt', actor: ctx.actor, reason: o.reason, epoch: cluster.epoch, detail, at: ctx.now() }));
  }
  return { anchors: adopted };
}

async function adoptOnShard(ctx: AdminContext, anchors: readonly ShardAnchor[], a: ShardAnchor, cluster: string): Promise<AdoptResult['anchors'][number] | null> {
  const room = { cluster, anchor: a.anchor };
  const seen = await unplaced(a.shard.db, cluster, false);
  if (seen.length === 0) return null;
  const [allotment] = await readAllotments(ctx.db, a.anchor, cluster);
  if (!allotment) throw new ClusterRefused(`${cluster} has no allotment on anchor ${a.anchor} (re-run add to complete it)`);
  const need = roomShortfall(allotment, sum(seen));
  if (anyPositive(need) && !(await borrowRoom(ctx.db, anchors, room, need, ctx.actor))) {
    const short = RESOURCE_NAMES.filter((r) => need[r] > 0).map((r) => `${r} ${need[r]}`);
    throw new ClusterRefused(`${cluster} cannot hold what already runs on it: short of ${short.join(', ')} on anchor ${a.anchor} (raise its capacity, then adopt again)`);
  }
  return a.shard.db.transaction(async (tx) => {
    const rows = await unplaced(tx, cluster, true);
    if (rows.length === 0) return null;
    const amounts = sum(rows);
    await tx.execute('UPDATE reservation SET room_anchor = ? WHERE cluster = ? AND room_anchor IS NULL AND tenant IN (?) AND id IN (?)', [
      a.anchor,
      cluster,
      [...new Set(rows.map((r) => r.tenant))],
      rows.map((r) => r.id),
    ]);
    if (!(await reserveRoom(tx, room, amounts, ADOPT_MODES, ctx.now()))) {
      throw new ClusterRefused(`${cluster}'s room on anchor ${a.anchor} changed while adopting (admissions arrived): adopt again`);
    }
    return { anchor: a.anchor, admissions: rows.length, amounts };
  });
}
