// Capacity moves between a cluster's pool (global keyspace) and one shard's allotment (the shard of
// its anchor): two-step sagas, rolled forward only, each step idempotent (docs/multi-cluster.md
// "T2 Allotment moves").
//   grant (pool → anchor)
//     G1, global:    the intent recorded and the pool gives `want` (guarded: pool ≥ want) — one transaction;
//     G2, the shard: the log row (primary key (anchor, move_id): a second application fails and rolls
//                    back) and allotted += want — one transaction;
//     G3, global:    the intent done.
//   reclaim (anchor → pool)
//     R1, global:    the intent recorded;
//     R2, the shard: allotted −= want only where the allotment's slack (allotted − reserved − stranded)
//                    covers it, and the log row with what was applied (want, or zeros) — one transaction;
//     R3, global:    the intent done and, only if that changed it, the pool gains what R2 applied — one transaction.
// A crash between steps leaves a pending intent; `resumeMoves` rolls it forward from step 2. Moves are
// not fenced: they move no tenant's money, and the guards (pool ≥, slack ≥, the log's key, R3's state
// guard) keep the capacity exact under any concurrency (scripts/operator/check.ts, `cluster-capacity`).
import type { Amounts } from '../schema/model-service.ts';
import { str } from './columns.ts';
import { isDuplicateKey, type Db, type Queryable, type SqlArg } from './db.ts';
import { AMOUNT_COLUMNS, AMOUNT_PLACEHOLDERS, amountArgs, amountsFromRow, amountsOf, prefixedAmountColumns, RESOURCE_NAMES } from './resources.ts';

export interface AllotmentMove {
  /** Deterministic where the caller re-runs (add's spread: `add:<cluster>:<added ms>:<anchor>`), so a re-run finds its intent. */
  id: string;
  cluster: string;
  anchor: string;
  want: Amounts;
  /** Who runs it (an operator, a controller's holder id). */
  by: string;
}

export type GrantOutcome = 'granted' | 'short';

class PoolShort extends Error {}

const guardEach = (prefix: string) => RESOURCE_NAMES.map((r) => `${prefix}_${AMOUNT_COLUMNS[r]} >= ?`).join(' AND ');
const addEach = (prefix: string, sign: '+' | '-') => RESOURCE_NAMES.map((r) => `${prefix}_${AMOUNT_COLUMNS[r]} = ${prefix}_${AMOUNT_COLUMNS[r]} ${sign} ?`).join(', ');

type Statement = [sql: string, args: SqlArg[]];

/** The intent's INSERT (run by the step that records it: G1, R1). */
const intentInsert = (m: AllotmentMove, direction: 'grant' | 'reclaim', now: Date, ignore = ''): Statement => [
  `INSERT ${ignore}INTO allotment_move (id, cluster, anchor, direction, ${prefixedAmountColumns('want')}, state, by_holder, created_at)
   VALUES (?, ?, ?, ?, ${AMOUNT_PLACEHOLDERS}, 'pending', ?, ?)`,
  [m.id, m.cluster, m.anchor, direction, ...amountArgs(m.want), m.by, now],
];

/** The log row's INSERT: what the move applied on its shard (run by G2, R2); its key makes a second application fail. */
const logInsert = (m: Omit<AllotmentMove, 'by'>, applied: Amounts, now: Date): Statement => [
  `INSERT INTO allotment_log (anchor, move_id, cluster, ${prefixedAmountColumns('applied')}, at) VALUES (?, ?, ?, ${AMOUNT_PLACEHOLDERS}, ?)`,
  [m.anchor, m.id, m.cluster, ...amountArgs(applied), now],
];

/** G1: the pool gives `want` and the intent is recorded, together. 'short': the pool lacks it (nothing written); a recorded intent is found again ('granted', nothing taken twice). */
export async function recordGrant(db: Db, m: AllotmentMove, now: Date): Promise<GrantOutcome> {
  try {
    await db.transaction(async (tx) => {
      await tx.execute(...intentInsert(m, 'grant', now));
      const took = await tx.execute(`UPDATE cluster SET ${addEach('pool', '-')}, updated_at = ? WHERE name = ? AND ${guardEach('pool')}`, [
        ...amountArgs(m.want),
        now,
        m.cluster,
        ...amountArgs(m.want),
      ]);
      if (took.rowsAffected !== 1) throw new PoolShort();
    });
    return 'granted';
  } catch (err) {
    if (err instanceof PoolShort) return 'short';
    if (isDuplicateKey(err)) return 'granted';
    throw err;
  }
}

/** G2: the anchor's allotment gains what the intent took from the pool, once (the log row's key). False: applied before. */
export async function applyGrant(db: Db, m: Omit<AllotmentMove, 'by'>, now: Date): Promise<boolean> {
  try {
    await db.transaction(async (tx) => {
      await tx.execute(...logInsert(m, m.want, now));
      const r = await tx.execute(`UPDATE cluster_allotment SET ${addEach('allotted', '+')}, updated_at = ? WHERE anchor = ? AND cluster = ?`, [...amountArgs(m.want), now, m.anchor, m.cluster]);
      if (r.rowsAffected !== 1) throw new Error(`no allotment of cluster ${m.cluster} for anchor ${m.anchor}: create it before granting`);
    });
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

/** G3: the intent done (once). */
export async function finishMove(q: Queryable, id: string, now: Date): Promise<void> {
  await q.execute(`UPDATE allotment_move SET state = 'done', done_at = ? WHERE id = ? AND state = 'pending'`, [now, id]);
}

/** The whole grant: G1, G2, G3. A re-run with the same id completes what a crash left and takes nothing twice. */
export async function grant(db: Db, m: AllotmentMove, now: () => Date): Promise<GrantOutcome> {
  if ((await recordGrant(db, m, now())) === 'short') return 'short';
  await applyGrant(db, m, now());
  await finishMove(db, m.id, now());
  return 'granted';
}

/** R1: the reclaim's intent (a second record of the same id changes nothing). */
export async function recordReclaim(q: Queryable, m: AllotmentMove, now: Date): Promise<void> {
  await q.execute(...intentInsert(m, 'reclaim', now, 'IGNORE '));
}

/**
 * R2: the anchor's allotment gives `want` back if its slack covers all of it, else nothing; the log
 * row records which, once. Returns what this move applied (found in the log on a repeat).
 */
export async function applyReclaim(db: Db, m: Omit<AllotmentMove, 'by'>, now: Date): Promise<Amounts> {
  try {
    return await db.transaction(async (tx) => {
      const slack = RESOURCE_NAMES.map((r) => `allotted_${AMOUNT_COLUMNS[r]} - reserved_${AMOUNT_COLUMNS[r]} - stranded_${AMOUNT_COLUMNS[r]} >= ?`).join(' AND ');
      const r = await tx.execute(`UPDATE cluster_allotment SET ${addEach('allotted', '-')}, updated_at = ? WHERE anchor = ? AND cluster = ? AND ${slack}`, [
        ...amountArgs(m.want),
        now,
        m.anchor,
        m.cluster,
        ...amountArgs(m.want),
      ]);
      const applied = r.rowsAffected === 1 ? m.want : amountsOf(() => 0);
      await tx.execute(...logInsert(m, applied, now));
      return applied;
    });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const logged = await moveLog(db, m.anchor, m.id);
    if (!logged) throw new Error(`move ${m.id}: a duplicate log row that cannot be read`, { cause: err });
    return logged;
  }
}

/** R3: the intent done and, only if this run marked it, the pool gains what R2 applied. */
export async function finishReclaim(db: Db, m: Pick<AllotmentMove, 'id' | 'cluster'>, applied: Amounts, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    const done = await tx.execute(`UPDATE allotment_move SET state = 'done', done_at = ? WHERE id = ? AND state = 'pending'`, [now, m.id]);
    if (done.rowsAffected === 1) await tx.execute(`UPDATE cluster SET ${addEach('pool', '+')}, updated_at = ? WHERE name = ?`, [...amountArgs(applied), now, m.cluster]);
  });
}

/** The whole reclaim: R1, R2, R3. Returns what went back to the pool (zeros: the slack did not cover `want`). */
export async function reclaim(db: Db, m: AllotmentMove, now: () => Date): Promise<Amounts> {
  await recordReclaim(db, m, now());
  const applied = await applyReclaim(db, m, now());
  await finishReclaim(db, m, applied, now());
  return applied;
}

export interface PendingMove extends Omit<AllotmentMove, 'by'> {
  direction: 'grant' | 'reclaim';
}

/** Pending intents (recorded before `before`, when given: a crash between the saga's steps left them), oldest first, at most `limit`. */
export async function pendingMoves(q: Queryable, o: { before?: Date; limit: number }): Promise<PendingMove[]> {
  const r = await q.execute(
    `SELECT id, cluster, anchor, direction, ${prefixedAmountColumns('want')} FROM allotment_move
      WHERE state = 'pending'${o.before ? ' AND created_at < ?' : ''} ORDER BY created_at, id LIMIT ?`,
    o.before ? [o.before, o.limit] : [o.limit],
  );
  return r.rows.map((row) => ({ id: str(row.id), cluster: str(row.cluster), anchor: str(row.anchor), direction: str(row.direction) === 'reclaim' ? 'reclaim' : 'grant', want: amountsFromRow(row, 'want_') }));
}

/** Rolls pending moves forward from their step 2 (each step idempotent: safe beside a live saga). Returns how many it finished. */
export async function resumeMoves(db: Db, o: { olderThanMs: number; now: () => Date; limit?: number }): Promise<number> {
  const moves = await pendingMoves(db, { before: new Date(o.now().getTime() - o.olderThanMs), limit: o.limit ?? 100 });
  for (const m of moves) {
    if (m.direction === 'grant') {
      await applyGrant(db, m, o.now());
      await finishMove(db, m.id, o.now());
    } else {
      await finishReclaim(db, m, await applyReclaim(db, m, o.now()), o.now());
    }
  }
  return moves.length;
}

/**
 * Capacity in flight between the pool and a shard, in neither: pending grants without their log
 * row (taken from the pool, not yet allotted) and pending reclaims with one (no longer allotted, not
 * yet back in the pool). `logOf` reads a move's log row on its anchor's shard.
 */
export async function movesInFlight(db: Db, logOf: (anchor: string, moveId: string) => Promise<Amounts | null>): Promise<Array<{ cluster: string; amounts: Amounts }>> {
  const out: Array<{ cluster: string; amounts: Amounts }> = [];
  for (const m of await pendingMoves(db, { limit: 10_000 })) {
    const logged = await logOf(m.anchor, m.id);
    if (m.direction === 'grant' && !logged) out.push({ cluster: m.cluster, amounts: m.want });
    if (m.direction === 'reclaim' && logged) out.push({ cluster: m.cluster, amounts: logged });
  }
  return out;
}

/** What the move applied on the anchor's shard (its log row), or null before it was applied. */
export async function moveLog(q: Queryable, anchor: string, moveId: string): Promise<Amounts | null> {
  const r = await q.execute(`SELECT ${prefixedAmountColumns('applied')} FROM allotment_log WHERE anchor = ? AND move_id = ?`, [anchor, moveId]);
  return r.rows[0] ? amountsFromRow(r.rows[0], 'applied_') : null;
}
