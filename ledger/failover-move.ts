// The failover move (docs/multi-cluster.md T7): a running admission of a lost cluster goes to
// another cluster in ONE transaction on its tenant's shard, and its charge goes with it, never
// doubled: the tenant's quota is not touched (it stays charged once), the room it held on the lost
// cluster becomes `stranded` there (that cluster may still run its pods: its capacity is not free
// until they are known gone), the same amounts are reserved on the target, the placement it left is
// recorded, its pending outbox rows for the lost cluster are closed and a `create` row is routed to
// the target. A `move` movement says so.
//
// Guards, each a row the transaction locks: the reservation is still on the lost cluster at the
// placement the runner saw, in a running state (a delete, a release or another move first: nothing
// is written); the source allotment on the tenant's shard is still `lost` (the operator's `ready`
// syncs it back to open first: a runner paused across it moves nothing) or `forgotten` (the
// operator's `forget`: the room there is given back instead of stranded); the target's reserve is
// `reserveRoom`'s guarded UPDATE (open, with room). Anything written by the lost cluster's
// controller afterwards for the admission matches no row: its writes join the fence of the row's
// cluster, now the target (ledger/fence.ts).
import type { Amounts } from '../schema/model-service.ts';
import { int, str } from './columns.ts';
import type { Db, Queryable } from './db.ts';
import { isLockConflict } from './db.ts';
import { insertMovement } from './movements.ts';
import { dedupeKey, enqueue } from './outbox.ts';
import { chooseCluster, freeRoom, reserveRoom, strandRoom, type Placer } from './placement.ts';
import { amountArgs, amountColumns, amountsFromRow, AMOUNT_PLACEHOLDERS, prefixedAmountColumns, RESOURCE_NAMES } from './resources.ts';

/** The states an admission moves in: placed and running (or about to be delivered). Deleting and releasing ones wait for the lost cluster, conflicts for an operator. */
export const MOVABLE_STATES = ['admitted', 'delivered', 'ready'] as const;

/** An admission on a lost cluster, as a page saw it. */
export interface Movable {
  tenant: string;
  id: string;
  /** reservation.placement_seq when seen: the move happens only from this placement. */
  seq: number;
}

/** The running admissions placed on `cluster`, oldest id first (one shard's page: run it per shard). */
export async function movablePage(shard: Queryable, cluster: string, limit: number): Promise<Movable[]> {
  const r = await shard.execute(`SELECT tenant, id, placement_seq FROM reservation WHERE cluster = ? AND state IN (?) ORDER BY id LIMIT ${Math.max(1, Math.floor(limit))}`, [
    cluster,
    MOVABLE_STATES,
  ]);
  return r.rows.map((row) => ({ tenant: str(row.tenant), id: str(row.id), seq: int(row.placement_seq) }));
}

export type MoveOutcome =
  | { kind: 'moved'; to: string; seq: number }
  /** Nothing to move any more: moved, deleted or released meanwhile, or the cluster is no longer lost on the tenant's shard. */
  | { kind: 'unchanged'; why: string }
  /** No open cluster has room for it, even with a grant: it stays where it is and is tried again on the next pass. */
  | { kind: 'no-room' }
  /** The policy's cluster for it is not the one asked for (`onlyTo`): nothing written, left to that cluster's supervisor. */
  | { kind: 'elsewhere'; to: string };

export interface MoveRequest extends Movable {
  /** The lost cluster. */
  from: string;
  /** The lost cluster's epoch (its `lost` bumped it): in the placement's reason and the movement's note. */
  lostEpoch: number;
  runner: string;
  now: Date;
  /** Move it only if the policy's cluster for it is this one (a supervisor taking what comes its own way); null: wherever. */
  onlyTo?: string | null;
  /** Runs after the move's last statement, before its COMMIT (the crash tests' hook). */
  beforeCommit?: () => void;
}

const MAX_ATTEMPTS = 3;

class Rollback extends Error {
  readonly outcome: MoveOutcome | 'room-taken';
  constructor(outcome: MoveOutcome | 'room-taken') {
    super('failover move rolled back');
    this.outcome = outcome;
  }
}

/**
 * Moves one admission off a lost cluster (see the module comment). The target is the placement
 * policy's first open cluster with room for what the admission holds (a grant from a cluster's pool
 * first when only that makes room, as at admission); a target whose room is taken meanwhile is
 * chosen again from a fresh read, at most three times.
 */
export async function moveOne(db: Db, placer: Placer, m: MoveRequest): Promise<MoveOutcome> {
  for (let attempt = 1; ; attempt++) {
    const held = await readHeld(db, m);
    if (!held) return { kind: 'unchanged', why: 'not on the lost cluster in a running state' };
    const choice = await chooseCluster(placer, db, m.tenant, held.amounts, { fresh: attempt > 1, by: m.runner, mayBorrow: async () => true });
    if (choice.type === 'none' || choice.target.anchor === null || choice.target.cluster === m.from) return { kind: 'no-room' };
    const target = { cluster: choice.target.cluster, anchor: choice.target.anchor };
    if (m.onlyTo && target.cluster !== m.onlyTo) return { kind: 'elsewhere', to: target.cluster };
    try {
      return await db.transaction((tx) => moveIn(tx, m, held, target));
    } catch (err) {
      if (err instanceof Rollback && err.outcome !== 'room-taken') return err.outcome;
      if (!(err instanceof Rollback) && !isLockConflict(err)) throw err;
      if (attempt >= MAX_ATTEMPTS) return { kind: 'no-room' };
    }
  }
}

interface Held {
  amounts: Amounts;
  generation: number;
  /** The anchor whose allotment holds its room on the lost cluster. */
  anchor: string;
}

const HELD_COLUMNS = `cluster, placement_seq, state, room_anchor, generation, ${amountColumns()}`;

function heldOf(row: Record<string, unknown> | undefined, m: MoveRequest): Held | null {
  if (!row || str(row.cluster) !== m.from || int(row.placement_seq) !== m.seq || !(MOVABLE_STATES as readonly string[]).includes(str(row.state))) return null;
  if (row.room_anchor === null || row.room_anchor === undefined) return null; // holds no room: not on a registered cluster
  return { amounts: amountsFromRow(row), generation: int(row.generation), anchor: str(row.room_anchor) };
}

async function readHeld(q: Queryable, m: MoveRequest): Promise<Held | null> {
  return heldOf((await q.execute(`SELECT ${HELD_COLUMNS} FROM reservation WHERE tenant = ? AND id = ?`, [m.tenant, m.id])).rows[0], m);
}

async function moveIn(tx: Queryable, m: MoveRequest, seen: Held, target: { cluster: string; anchor: string }): Promise<MoveOutcome> {
  // 1. The reservation, locked first (the ledger's lock order: reservation, then allotments, source first).
  const held = heldOf((await tx.execute(`SELECT ${HELD_COLUMNS} FROM reservation WHERE tenant = ? AND id = ? FOR UPDATE`, [m.tenant, m.id])).rows[0], m);
  if (!held) throw new Rollback({ kind: 'unchanged', why: 'moved, deleted or released meanwhile' });
  if (RESOURCE_NAMES.some((r) => held.amounts[r] !== seen.amounts[r])) throw new Rollback('room-taken'); // a refund meanwhile: choose again for what it holds now
  // 2. Its room on the cluster it leaves, while that cluster is still lost (or forgotten) on this shard:
  //    stranded on a lost one (its pods may still run there); given back on a forgotten one (the
  //    operator vouched that nothing of it runs).
  const mode = (await tx.execute('SELECT mode FROM cluster_allotment WHERE anchor = ? AND cluster = ? FOR UPDATE', [held.anchor, m.from])).rows[0]?.mode;
  if (mode !== 'lost' && mode !== 'forgotten') throw new Rollback({ kind: 'unchanged', why: `${m.from} is no longer lost on the tenant's shard` });
  const forgotten = mode === 'forgotten';
  await (forgotten ? freeRoom : strandRoom)(tx, { anchor: held.anchor, cluster: m.from }, held.amounts, m.now);
  // 3. The same room on the target.
  if (!(await reserveRoom(tx, target, held.amounts, ['open'], m.now))) throw new Rollback('room-taken');
  const next = m.seq + 1;
  const reason = `failover: ${m.from} ${forgotten ? 'forgotten' : 'lost'} (epoch ${m.lostEpoch})`;
  // 4. The placement left, with the room it holds there (none any more, on a forgotten cluster).
  await tx.execute(
    `INSERT INTO placement (tenant, reservation_id, seq, cluster, anchor, state, reason, ${prefixedAmountColumns('held')}, ended_at, freed_at, freed_reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ${AMOUNT_PLACEHOLDERS}, ?, ?, ?)`,
    [m.tenant, m.id, m.seq, m.from, held.anchor, forgotten ? 'forgotten' : 'stranded', reason, ...amountArgs(held.amounts), m.now, forgotten ? m.now : null, forgotten ? 'cluster forgotten' : null],
  );
  // 5. The admission on its new placement, to be delivered there.
  await tx.execute(
    `UPDATE reservation SET cluster = ?, placement_seq = ?, room_anchor = ?, state = 'admitted', state_changed_at = ?, updated_at = ?, last_reconciled_at = NULL
      WHERE tenant = ? AND id = ?`,
    [target.cluster, next, target.anchor, m.now, m.now, m.tenant, m.id],
  );
  await tx.execute('DELETE FROM binding WHERE tenant = ? AND reservation_id = ?', [m.tenant, m.id]);
  // 6. Nothing more for the lost cluster to do for it; the target creates it.
  await tx.execute(
    `UPDATE outbox SET done_at = ?, claimed_until = NULL, last_error = ?, dedupe_key = CASE WHEN kind = 'reconcile' THEN NULL ELSE dedupe_key END
      WHERE tenant = ? AND reservation_id = ? AND cluster = ? AND done_at IS NULL AND dead_at IS NULL`,
    [m.now, `moved to ${target.cluster}`, m.tenant, m.id, m.from],
  );
  await enqueue(tx, [{ tenant: m.tenant, reservationId: m.id, kind: 'create', dedupeKey: dedupeKey.create(m.id, next), requestId: null, cluster: target.cluster }], m.now);
  await insertMovement(tx, {
    reservationId: m.id,
    tenant: m.tenant,
    generation: held.generation,
    direction: 'move',
    amounts: held.amounts,
    now: m.now,
    moved: { placementSeq: next, cluster: target.cluster, note: `from ${m.from} (lost at epoch ${m.lostEpoch}) by ${m.runner}` },
  });
  m.beforeCommit?.();
  return { kind: 'moved', to: target.cluster, seq: next };
}
