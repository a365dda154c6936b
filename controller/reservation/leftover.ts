// What a cluster's controller does with an admission that was placed on its cluster and moved away
// (docs/multi-cluster.md T8, T9: a failover moved it while this cluster was lost). Its ModelService
// here, if one is left, is a leftover: deleted (uid precondition, foreground), with no ledger
// write: the admission is charged, and served, on its new cluster. Once no ModelService and no pod
// of it is left here (Terminating ones included), the room its placement here still holds (stranded)
// is freed: one fenced transaction on the tenant's shard. The fence is this cluster's row for the
// tenant at this leader's epoch, so only this cluster's current leader frees, and only once.
// Evidence first: an admission placed on another cluster that never left a placement here (an
// install upgraded before it registered its clusters) is not touched.
import type { Db, Queryable } from '../../ledger/db.ts';
import { FENCE } from '../../ledger/fence.ts';
import { int, str } from '../../ledger/columns.ts';
import { unstrandRoom } from '../../ledger/placement.ts';
import { amountsFromRow, prefixedAmountColumns } from '../../ledger/resources.ts';
import { crNameFor } from '../../schema/admission.ts';
import type { Amounts } from '../../schema/model-service.ts';
import type { Result } from '../runtime/controller.ts';
import { crashPoint } from '../runtime/crash.ts';
import type { Logger } from '../runtime/log.ts';
import { commitOrRollback } from './commit-or-rollback.ts';
import type { ObservedCR, ObservedPod } from './decide.ts';
import type { ReservationKey } from './key.ts';
import type { ReconcileScope } from './reconcile-deps.ts';
import type { ReservationRecord } from './record.ts';

/** How often a leftover whose deletion is under way is looked at again. */
const POLL_MS = 2_000;

/** A placement the admission left on a cluster. */
export interface LeftPlacement {
  seq: number;
  state: string;
  anchor: string;
  held: Amounts;
}

/** The placements the admission left on `cluster` (single-shard). */
export async function placementsLeft(q: Queryable, key: ReservationKey, cluster: string): Promise<LeftPlacement[]> {
  const r = await q.execute(`SELECT seq, state, anchor, ${prefixedAmountColumns('held')} FROM placement WHERE tenant = ? AND reservation_id = ? AND cluster = ? ORDER BY seq`, [
    key.tenant,
    key.id,
    cluster,
  ]);
  return r.rows.map((row) => ({ seq: int(row.seq), state: str(row.state), anchor: str(row.anchor), held: amountsFromRow(row, 'held_') }));
}

/**
 * stranded → freed, and its room given back to the cluster's allotment, in ONE transaction: the
 * placement row first, fenced (tenant, this cluster) at `epoch` and guarded by its state, so a
 * second call or a deposed leader changes nothing. True when this call freed it.
 */
export async function freeStranded(db: Db, key: ReservationKey, cluster: string, p: LeftPlacement, epoch: number, now: Date): Promise<boolean> {
  return commitOrRollback(db, async (tx, rollback) => {
    const freed = await tx.execute(
      `UPDATE placement p ${FENCE('p')} SET p.state = 'freed', p.freed_at = ?, p.freed_reason = 'pods-gone'
        WHERE p.tenant = ? AND p.reservation_id = ? AND p.seq = ? AND p.cluster = ? AND p.state = 'stranded'`,
      [epoch, now, key.tenant, key.id, p.seq, cluster],
    );
    if (freed.rowsAffected !== 1) return rollback(false);
    await unstrandRoom(tx, { anchor: p.anchor, cluster }, p.held, now);
    crashPoint('inside-free-stranded-before-commit');
    return true;
  });
}

export type LeftoverAction = { type: 'none' } | { type: 'deleteCR'; uid: string } | { type: 'wait' } | { type: 'free'; placements: LeftPlacement[] };

/**
 * PURE: the next thing to do about an admission that left this cluster. `ours`: the ModelService
 * under its name is this admission's (admission id and tenant).
 */
export function decideLeftover(left: readonly LeftPlacement[], cr: ObservedCR | null, ours: boolean, pods: readonly ObservedPod[]): LeftoverAction {
  if (left.length === 0) return { type: 'none' }; // never placed here: not ours to judge
  if (cr && ours && !cr.deleting) return { type: 'deleteCR', uid: cr.uid };
  if ((cr && ours) || pods.length > 0) return { type: 'wait' };
  const stranded = left.filter((p) => p.state === 'stranded');
  return stranded.length > 0 ? { type: 'free', placements: stranded } : { type: 'none' };
}

/** One step for an admission placed on another cluster than this controller's (see the module comment). */
export async function stepLeftover(d: ReconcileScope, rec: ReservationRecord, epoch: number, log: Logger): Promise<Result> {
  const here = d.fence.cluster;
  const left = await placementsLeft(d.db, rec, here);
  if (left.length === 0) return {};
  const ns = d.namespaceFor(rec.tenant);
  const name = crNameFor(rec.id);
  const cr = await d.cluster.readModelService(ns, name);
  const ours = cr !== null && cr.admissionId === rec.id && cr.tenant === rec.tenant;
  const pods = cr && ours ? [] : await d.cluster.listPods(ns, rec.id);
  const action = decideLeftover(left, cr, ours, pods);
  switch (action.type) {
    case 'none':
      return {};
    case 'deleteCR': {
      const outcome = await d.cluster.deleteModelService(ns, name, { uid: action.uid });
      crashPoint('after-leftover-delete-before-free');
      d.metrics.leftoversDeleted.inc();
      log.info('leftover ModelService of an admission moved to another cluster: delete issued', { placedOn: rec.cluster, uid: action.uid, outcome });
      return { requeueAfterMs: POLL_MS };
    }
    case 'wait':
      return { requeueAfterMs: POLL_MS };
    case 'free':
      for (const p of action.placements) {
        if (await freeStranded(d.db, rec, here, p, epoch, d.now())) {
          d.metrics.strandedFreed.inc();
          log.info('stranded room freed: nothing of the admission is left on this cluster', { placedOn: rec.cluster, placement: p.seq });
        }
      }
      return {};
  }
}
