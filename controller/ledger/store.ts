// The controller's side of the MySQL ledger. Every write is FENCED by the controller epoch:
// it joins its tenant's `tenant_fence` row on `epoch = ?` (ledger/fence.ts), so once a new
// leader has raised the fence, a paused ex-leader's late statements match no row and change
// nothing. Every state change is conditional on the state it leaves, so running any of them twice
// changes nothing. Every statement names the tenant (the ledger is sharded by tenant) or runs on
// one shard (ledger/shards.ts).
import { isDuplicateKey, type Db, type Queryable, type Row } from '../../ledger/db.ts';
import { bool, failureColumn, failureOrNull, int, json, str, stringListOrNull, strOrNull, time, timeOrNull } from '../../ledger/columns.ts';
import { AMOUNT_COLUMNS, amountArgs, amountColumns, amountsFromRow, releaseUsageByAmounts, RESOURCE_NAMES } from '../../ledger/resources.ts';
import { releaseBlockedReasonOrNull, reservationState, type MovementDirection } from '../../ledger/rows.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { RESERVATION_STATES, TERMINAL_STATES, type ReleaseBlockedReason, type ReservationState } from '../../schema/admission.ts';
import { FENCE } from '../../ledger/fence.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { crashPoint } from '../runtime/crash.ts';
import type { LedgerRow, ReleaseBlocker } from './decide.ts';
import { ledgerKey } from './key.ts';
import { ack, ClaimLost, type ClaimedRow } from './outbox-store.ts';
import type { Progress } from './progress.ts';


/** Where a reservation lives: its tenant (the shard) and its id. */
export interface ReservationKey {
  tenant: string;
  id: string;
}

export interface LedgerRecord extends LedgerRow {
  createdAt: Date;
  requestId: string;
  /** The admitted spec as stored; validated only where it is used (delivery), so a row that a newer
   *  schema would refuse can still be deleted and released. */
  spec: unknown;
  releaseBlockedReason: ReleaseBlockedReason | null;
  releaseBlockedPods: string[] | null;
  releaseBlockedFinalizers: string[] | null;
  /** What the admission charged (totals, ledger units). */
  amounts: Amounts;
  lastReconciledAt: Date | null;
  binding: (LedgerRow['binding'] & { namespace: string; crName: string; firstReadyAt: Date | null } & Progress) | null;
}

/** The tenant's usage goes down by exactly `amounts` (release, and an operator's resolve --release): one statement by tenant. */
async function giveBackUsage(tx: Queryable, tenant: string, amounts: Amounts, now: Date): Promise<void> {
  const usage = releaseUsageByAmounts(amounts);
  await tx.execute(`UPDATE tenant_quota SET ${usage.sql}, updated_at = ? WHERE tenant = ? AND resource IN (?)`, [...usage.args, now, tenant, [...RESOURCE_NAMES]]);
}

/**
 * Crash gap 2 closed (docs/design.md, "Crash gaps"): in ONE transaction guarded by the claim and the epoch, record the CR identity
 * actually created (binding), move the reservation admitted → delivered (it may have moved to
 * deleting meanwhile: the binding is still recorded so the delete finds it), and mark the row
 * done. Throws ClaimLost (nothing written) when the claim no longer holds.
 */
export async function ackCreate(
  db: Db,
  row: ClaimedRow,
  cr: { namespace: string; name: string; uid: string },
  now: Date,
): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await ack(tx, row, now))) throw new ClaimLost(row.seq);
    await tx.execute(
      `INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE uid = COALESCE(uid, VALUES(uid)), updated_at = VALUES(updated_at)`,
      [row.tenant, row.reservationId, cr.namespace, cr.name, cr.uid, now, now],
    );
    await tx.execute(
      `UPDATE reservation SET state = 'delivered', state_changed_at = ?, updated_at = ?, last_reconciled_at = ? WHERE tenant = ? AND id = ? AND state = 'admitted'`,
      [now, now, now, row.tenant, row.reservationId],
    );
  });
}

/**
 * Becoming leader: bump the global epoch (BEGIN, UPDATE, SELECT, COMMIT in the global keyspace),
 * then raise the fence of every tenant that has a quota to it, shard by shard (one statement per
 * shard, creating the rows of tenants that had none). Only when every shard is raised is the
 * epoch returned: from then on no write of an older leader matches a fence row of those tenants.
 */
export async function acquireEpoch(db: Db, holder: string, now: Date): Promise<number> {
  const epoch = await db.transaction(async (tx) => {
    await tx.execute(
      `INSERT INTO controller_epoch (id, epoch, holder, updated_at) VALUES (1, 1, ?, ?)
       ON DUPLICATE KEY UPDATE epoch = epoch + 1, holder = VALUES(holder), updated_at = VALUES(updated_at)`,
      [holder, now],
    );
    const r = await tx.execute('SELECT epoch FROM controller_epoch WHERE id = 1');
    return int(r.rows[0]?.epoch);
  });
  for (const shard of await ledgerShards(db)) await raiseFences(shard.db, epoch, holder, now);
  return epoch;
}

/** Raises (never lowers) a fence row; the holder and time change only when it is raised. */
const RAISE = `ON DUPLICATE KEY UPDATE
       holder = IF(VALUES(epoch) > tenant_fence.epoch, VALUES(holder), tenant_fence.holder),
       updated_at = IF(VALUES(epoch) > tenant_fence.epoch, VALUES(updated_at), tenant_fence.updated_at),
       epoch = GREATEST(tenant_fence.epoch, VALUES(epoch))`;

/** One shard's takeover: every tenant with a quota row on it gets its fence raised to `epoch`. */
async function raiseFences(shard: Db, epoch: number, holder: string, now: Date): Promise<void> {
  await shard.execute(
    `INSERT INTO tenant_fence (tenant, epoch, holder, updated_at)
     SELECT DISTINCT q.tenant, ?, ?, ? FROM tenant_quota q
     ${RAISE}`,
    [epoch, holder, now],
  );
}

/**
 * A tenant met for the first time by this leader (its fence row may be missing: a tenant created
 * after the takeover): raise its fence to `epoch` before acting on it. One single-shard statement.
 * It is part of the fence, not fenced by it: it never lowers a row, so a deposed leader calling
 * it raises nothing above the current epoch.
 */
export async function ensureFence(q: Queryable, tenant: string, epoch: number, holder: string, now: Date): Promise<void> {
  await q.execute(`INSERT INTO tenant_fence (tenant, epoch, holder, updated_at) VALUES (?, ?, ?, ?) ${RAISE}`, [tenant, epoch, holder, now]);
}

const date = (v: unknown): Date => new Date(time(v));
const dateOrNull = (v: unknown): Date | null => {
  const t = timeOrNull(v);
  return t === null ? null : new Date(t);
};

/** A reservation with its binding and its change in flight; callers add the WHERE. */
const RECORD_SELECT = `SELECT r.id, r.tenant, r.state, r.state_changed_at, r.release_blocked_since, r.created_at, r.request_id, r.spec, r.last_reconciled_at,
            r.release_blocked_reason, r.release_blocked_pods, r.release_blocked_finalizers, ${amountColumns('r')},
            r.generation, r.applied_generation, r.settled_generation, c.from_replicas,
            b.namespace, b.cr_name, b.uid, b.ever_ready, b.first_ready_at, b.scheduled_at, b.started_at, b.last_failure, b.reservation_id AS bound
       FROM reservation r LEFT JOIN binding b ON b.tenant = r.tenant AND b.reservation_id = r.id
       LEFT JOIN reservation_change c ON c.tenant = r.tenant AND c.reservation_id = r.id AND c.generation = r.generation`;

export async function loadLedgerRecord(q: Queryable, key: ReservationKey): Promise<LedgerRecord | undefined> {
  const r = await q.execute(`${RECORD_SELECT} WHERE r.tenant = ? AND r.id = ?`, [key.tenant, key.id]);
  const row = r.rows[0];
  return row ? recordFromRow(row) : undefined;
}

/**
 * The records of several reservations in ONE statement (the poller's read of the deliveries it
 * just claimed, on the shard it claimed them from). Only the exact keys asked for are returned.
 */
export async function loadLedgerRecords(q: Queryable, keys: readonly ReservationKey[]): Promise<LedgerRecord[]> {
  if (keys.length === 0) return [];
  const wanted = new Set(keys.map(ledgerKey));
  const r = await q.execute(`${RECORD_SELECT} WHERE r.tenant IN (?) AND r.id IN (?)`, [[...new Set(keys.map((k) => k.tenant))], keys.map((k) => k.id)]);
  return r.rows.map(recordFromRow).filter((rec) => wanted.has(ledgerKey(rec)));
}

function recordFromRow(row: Row): LedgerRecord {
  const spec = json(row.spec);
  return {
    id: str(row.id),
    tenant: str(row.tenant),
    state: reservationState(row.state),
    stateChangedAt: date(row.state_changed_at),
    releaseBlockedSince: dateOrNull(row.release_blocked_since),
    createdAt: date(row.created_at),
    requestId: str(row.request_id),
    spec,
    change: {
      generation: int(row.generation),
      appliedGeneration: int(row.applied_generation),
      settledGeneration: int(row.settled_generation),
      replicas: desiredReplicas(spec),
      fromReplicas: row.from_replicas === null || row.from_replicas === undefined ? null : int(row.from_replicas),
    },
    releaseBlockedReason: releaseBlockedReasonOrNull(row.release_blocked_reason),
    releaseBlockedPods: stringListOrNull(row.release_blocked_pods),
    releaseBlockedFinalizers: stringListOrNull(row.release_blocked_finalizers),
    amounts: amountsFromRow(row),
    lastReconciledAt: dateOrNull(row.last_reconciled_at),
    binding:
      row.bound === null || row.bound === undefined
        ? null
        : {
            namespace: str(row.namespace),
            crName: str(row.cr_name),
            uid: strOrNull(row.uid),
            everReady: bool(row.ever_ready),
            firstReadyAt: dateOrNull(row.first_ready_at),
            scheduledAt: dateOrNull(row.scheduled_at),
            startedAt: dateOrNull(row.started_at),
            lastFailure: failureOrNull(row.last_failure),
          },
  };
}

/** spec.replicas of the stored spec (validated only at delivery; a spec without it asks for 0). */
function desiredReplicas(spec: unknown): number {
  const n = typeof spec === 'object' && spec !== null ? (spec as { replicas?: unknown }).replicas : undefined;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0;
}

/**
 * The ModelService carries the replicas of change `generation`: record it applied — and, for an
 * increase (charged when it was accepted), settled. Fenced; one single-table statement; only
 * forward (a second call, or a late one for an older generation, changes nothing).
 */
export async function recordScaleApplied(q: Queryable, key: ReservationKey, generation: number, settles: boolean, epoch: number, now: Date): Promise<boolean> {
  const r = await q.execute(
    `UPDATE reservation r ${FENCE('r')}
        SET r.applied_generation = ?${settles ? ', r.settled_generation = ?' : ''}, r.updated_at = ?
      WHERE r.tenant = ? AND r.id = ? AND r.generation = ? AND r.applied_generation < ?`,
    [epoch, generation, ...(settles ? [generation] : []), now, key.tenant, key.id, generation, generation],
  );
  return r.rowsAffected > 0;
}

/**
 * A decrease's refund = ONE conditional transaction, fenced: the reservation's amounts go down by
 * `delta` and its change generation is settled (only while it still runs, the generation is
 * current, applied and unsettled: a delete that overtook the decrease releases it all instead);
 * the `refund` movement of this generation (its primary key refuses a second); usage down by
 * `delta`. Returns false (nothing changed) when there was nothing to refund. BEGIN + 3 + COMMIT.
 */
export async function refundScaleDown(db: Db, key: ReservationKey, generation: number, delta: Amounts, epoch: number, now: Date): Promise<boolean> {
  const subtract = RESOURCE_NAMES.map((res) => `r.${AMOUNT_COLUMNS[res]} = r.${AMOUNT_COLUMNS[res]} - ?`).join(', ');
  return db
    .transaction(async (tx) => {
      const moved = await tx.execute(
        `UPDATE reservation r ${FENCE('r')}
            SET ${subtract}, r.settled_generation = r.generation, r.updated_at = ?
          WHERE r.tenant = ? AND r.id = ? AND r.generation = ? AND r.applied_generation >= r.generation
            AND r.settled_generation < r.generation AND r.state IN ('delivered', 'ready')`,
        [epoch, ...amountArgs(delta), now, key.tenant, key.id, generation],
      );
      if (moved.rowsAffected !== 1) throw new NothingToRefund();
      await insertMovement(tx, key, generation, 'refund', delta, now);
      crashPoint('inside-refund-before-commit');
      await giveBackUsage(tx, key.tenant, delta, now);
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof NothingToRefund) return false;
      throw err;
    });
}

class NothingToRefund extends Error {}

/** One quota_movement row (the primary key (reservation, generation, direction) refuses a second). */
async function insertMovement(tx: Queryable, key: ReservationKey, generation: number, direction: MovementDirection, amounts: Amounts, now: Date, note: string | null = null): Promise<void> {
  await tx.execute(
    `INSERT INTO quota_movement (reservation_id, generation, direction, tenant, ${amountColumns()}, at, note)
     VALUES (?, ?, ?, ?, ${RESOURCE_NAMES.map(() => '?').join(', ')}, ?, ?)`,
    [key.id, generation, direction, key.tenant, ...amountArgs(amounts), now, note],
  );
}

/**
 * Copies what the ModelService status observed onto the binding (progress.ts: only what is new;
 * a time is set once). Fenced; one single-table statement by (tenant, reservation).
 */
export async function recordProgress(q: Queryable, key: ReservationKey, p: Progress, epoch: number, now: Date): Promise<boolean> {
  const r = await q.execute(
    `UPDATE binding b ${FENCE('b')}
        SET b.scheduled_at = COALESCE(b.scheduled_at, ?), b.started_at = COALESCE(b.started_at, ?),
            b.last_failure = COALESCE(?, b.last_failure), b.updated_at = ?
      WHERE b.tenant = ? AND b.reservation_id = ?`,
    [epoch, p.scheduledAt, p.startedAt, p.lastFailure ? failureColumn(p.lastFailure) : null, now, key.tenant, key.id],
  );
  return r.rowsAffected > 0;
}

const OPEN_STATES = RESERVATION_STATES.filter((st) => !(TERMINAL_STATES as readonly string[]).includes(st));

/** Finds the tenant of an admission id (the operator's tools know only the id): one shard at a time. */
export async function tenantOf(db: Db, id: string): Promise<string | undefined> {
  for (const shard of await ledgerShards(db)) {
    const row = (await shard.db.execute('SELECT tenant FROM reservation WHERE id = ?', [id])).rows[0];
    if (row) return str(row.tenant);
  }
  return undefined;
}

/** Where a resync page starts: after this (last_reconciled_at, id); a NULL time sorts first. */
export interface ResyncCursor {
  reconciledAt: Date | null;
  id: string;
}
/** Stands for a NULL last_reconciled_at in the ordering (DATETIME's minimum). */
const NEVER = new Date('1000-01-01T00:00:00.000Z');

/**
 * One page of open reservations not reconciled since `before`, stalest first (never reconciled
 * first), after `cursor`. The periodic resync's scan: it cannot name a tenant (it walks every
 * tenant), so it runs on ONE shard (`q` is a shard's Db, ledger/shards.ts); the page bounds each
 * statement.
 */
export async function openReservationsPage(
  q: Queryable,
  o: { before: Date; after: ResyncCursor | null; limit: number },
): Promise<{ keys: ReservationKey[]; next: ResyncCursor | null }> {
  const after = o.after ?? { reconciledAt: NEVER, id: '' };
  const r = await q.execute(
    `SELECT tenant, id, last_reconciled_at FROM reservation
      WHERE state IN (?) AND (last_reconciled_at IS NULL OR last_reconciled_at < ?)
        AND (COALESCE(last_reconciled_at, CAST(? AS DATETIME(3))), id) > (CAST(? AS DATETIME(3)), ?)
      ORDER BY COALESCE(last_reconciled_at, CAST(? AS DATETIME(3))), id
      LIMIT ?`,
    [OPEN_STATES, o.before, NEVER, after.reconciledAt ?? NEVER, after.id, NEVER, o.limit],
  );
  // The driver sends a Date as text: CAST keeps every comparison a DATETIME one (a COALESCE of a
  // DATETIME and text would compare as text, and 'T' sorts after ' ').
  const keys = r.rows.map((row) => ({ tenant: str(row.tenant), id: str(row.id) }));
  const last = r.rows.at(-1);
  const next = last && r.rows.length === o.limit ? { reconciledAt: dateOrNull(last.last_reconciled_at), id: str(last.id) } : null;
  return { keys, next };
}

/**
 * delivered → ready, and ever_ready/first_ready_at on the binding: one transaction of two fenced
 * single-table statements (vtgate does not merge a three-table UPDATE into one shard's route).
 * Only a reservation with a binding moves; a second call changes nothing.
 */
export async function markReady(db: Db, key: ReservationKey, epoch: number, now: Date): Promise<boolean> {
  return db
    .transaction(async (tx) => {
      const moved = await tx.execute(
        `UPDATE reservation r ${FENCE('r')}
            SET r.state = 'ready', r.state_changed_at = ?, r.updated_at = ?
          WHERE r.tenant = ? AND r.id = ? AND r.state = 'delivered'
            AND EXISTS (SELECT 1 FROM binding b WHERE b.tenant = r.tenant AND b.reservation_id = r.id)`,
        [epoch, now, now, key.tenant, key.id],
      );
      if (moved.rowsAffected !== 1) throw new NothingToMark();
      const bound = await tx.execute(
        `UPDATE binding b ${FENCE('b')}
            SET b.ever_ready = 1, b.first_ready_at = COALESCE(b.first_ready_at, ?), b.updated_at = ?
          WHERE b.tenant = ? AND b.reservation_id = ?`,
        [epoch, now, now, key.tenant, key.id],
      );
      if (bound.rowsAffected !== 1) throw new NothingToMark(); // the fence moved between the two: roll back
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof NothingToMark) return false;
      throw err;
    });
}

class NothingToMark extends Error {}

/** A guarded state change: only from one of `from`, only while `epoch` is current. */
export async function transition(
  q: Queryable,
  key: ReservationKey,
  from: readonly ReservationState[],
  to: ReservationState,
  epoch: number,
  now: Date,
  reason: string | null,
): Promise<boolean> {
  const r = await q.execute(
    `UPDATE reservation r ${FENCE('r')}
        SET r.state = ?, r.state_changed_at = ?, r.updated_at = ?, r.last_error = COALESCE(?, r.last_error)
      WHERE r.tenant = ? AND r.id = ? AND r.state IN (?)`,
    [epoch, to, now, now, reason, key.tenant, key.id, from],
  );
  return r.rowsAffected > 0;
}

/** Tells the Worker's cron sweep that this reservation was looked at (it enqueues stale ones). */
export async function touchReconciled(q: Queryable, key: ReservationKey, epoch: number, now: Date): Promise<void> {
  await q.execute(`UPDATE reservation r ${FENCE('r')} SET r.last_reconciled_at = ? WHERE r.tenant = ? AND r.id = ?`, [epoch, now, key.tenant, key.id]);
}

/** Records since when the release is blocked (kept once set) and by what (replaced); cleared on release. */
export async function setReleaseBlocked(
  q: Queryable,
  at: ReservationKey,
  since: Date,
  blocker: ReleaseBlocker,
  epoch: number,
  now: Date,
): Promise<void> {
  await q.execute(
    `UPDATE reservation r ${FENCE('r')}
        SET r.release_blocked_since = COALESCE(r.release_blocked_since, ?), r.release_blocked_reason = ?,
            r.release_blocked_pods = ?, r.release_blocked_finalizers = ?, r.updated_at = ?
      WHERE r.tenant = ? AND r.id = ? AND r.state = 'releasing'`,
    [epoch, since, blocker.reason, JSON.stringify(blocker.pods), JSON.stringify(blocker.finalizers), now, at.tenant, at.id],
  );
}

/**
 * Release = ONE conditional transaction: releasing → released only if still releasing and the
 * epoch is current; the `quota_movement` release row (its primary key refuses a second
 * release); usage decremented by the reservation's own amounts. Returns false (and changes
 * nothing) when there was nothing to release. BEGIN + 4 statements + COMMIT, each by
 * (tenant, …): the amounts are read back from the row the first statement locked, then written
 * as values (vtgate routes an INSERT … SELECT or an UPDATE … JOIN row by row, not as one shard's).
 */
export async function release(db: Db, key: ReservationKey, epoch: number, now: Date): Promise<boolean> {
  return db
    .transaction(async (tx) => {
      const moved = await tx.execute(
        `UPDATE reservation r ${FENCE('r')}
            SET r.state = 'released', r.state_changed_at = ?, r.updated_at = ?,
                r.release_blocked_since = NULL, r.release_blocked_reason = NULL, r.release_blocked_pods = NULL, r.release_blocked_finalizers = NULL
          WHERE r.tenant = ? AND r.id = ? AND r.state = 'releasing'`,
        [epoch, now, now, key.tenant, key.id],
      );
      if (moved.rowsAffected !== 1) throw new NothingToRelease();
      const row = (await tx.execute(`SELECT generation, ${amountColumns()} FROM reservation WHERE tenant = ? AND id = ?`, [key.tenant, key.id])).rows[0];
      if (!row) throw new NothingToRelease();
      const amounts = amountsFromRow(row);
      await insertMovement(tx, key, int(row.generation), 'release', amounts, now);
      await giveBackUsage(tx, key.tenant, amounts, now);
      crashPoint('inside-release-before-commit');
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof NothingToRelease) return false;
      throw err;
    });
}

class NothingToRelease extends Error {}

export type Resolution = 'release' | 'keep';
export type ResolveOutcome = 'resolved' | 'not-in-conflict' | 'already-resolved';

/**
 * An operator's decision on a conflict (`npm run tenant -- resolve`), in ONE conditional
 * transaction keyed by (tenant, id). Not fenced: the controller never writes a reservation in
 * conflict, and the condition `state = 'conflict'` makes a second run change nothing.
 *  - release: conflict → released, the `release` movement (its primary key refuses a second),
 *    usage down by the reservation's own amounts, and the `resolve-release` audit row;
 *  - keep: the `resolve-keep` audit row and the reason on the reservation; it stays in conflict,
 *    charged (a later `release` is still possible; a second `keep` is refused by the key).
 * BEGIN + 4 (release) or 3 (keep) statements + COMMIT.
 */
export async function resolveConflict(
  db: Db,
  at: ReservationKey,
  decision: Resolution,
  note: string,
  now: Date,
): Promise<ResolveOutcome> {
  const lastError = `resolved by an operator (${decision}): ${note}`.slice(0, 1000);
  const where = 'WHERE tenant = ? AND id = ?';
  return db
    .transaction(async (tx) => {
      const moved = await tx.execute(
        decision === 'release'
          ? `UPDATE reservation SET state = 'released', state_changed_at = ?, updated_at = ?, last_error = ?,
                    release_blocked_since = NULL, release_blocked_reason = NULL, release_blocked_pods = NULL, release_blocked_finalizers = NULL
              ${where} AND state = 'conflict'`
          : `UPDATE reservation SET updated_at = ?, last_error = ? ${where} AND state = 'conflict'`,
        decision === 'release' ? [now, now, lastError, at.tenant, at.id] : [now, lastError, at.tenant, at.id],
      );
      if (moved.rowsAffected !== 1) throw new ResolveAbort('not-in-conflict');
      // Every statement names the tenant, so each is single-shard on a ledger sharded by tenant.
      const row = (await tx.execute(`SELECT generation, ${amountColumns()} FROM reservation ${where}`, [at.tenant, at.id])).rows[0];
      if (!row) throw new ResolveAbort('not-in-conflict');
      const amounts = amountsFromRow(row);
      const generation = int(row.generation);
      const rows: Array<[MovementDirection, string | null]> =
        decision === 'release' ? [['resolve-release', note], ['release', null]] : [['resolve-keep', note]];
      try {
        await tx.execute(
          `INSERT INTO quota_movement (reservation_id, generation, direction, tenant, ${amountColumns()}, at, note)
           VALUES ${rows.map(() => `(?, ?, ?, ?, ${RESOURCE_NAMES.map(() => '?').join(', ')}, ?, ?)`).join(', ')}`,
          rows.flatMap(([direction, n]) => [at.id, generation, direction, at.tenant, ...amountArgs(amounts), now, n]),
        );
      } catch (err) {
        throw isDuplicateKey(err) ? new ResolveAbort('already-resolved') : err;
      }
      if (decision === 'release') {
        await giveBackUsage(tx, at.tenant, amounts, now);
      }
      return 'resolved' as const;
    })
    .catch((err: unknown) => {
      if (err instanceof ResolveAbort) return err.outcome;
      throw err;
    });
}

class ResolveAbort extends Error {
  readonly outcome: Exclude<ResolveOutcome, 'resolved'>;
  constructor(outcome: Exclude<ResolveOutcome, 'resolved'>) {
    super(outcome);
    this.outcome = outcome;
  }
}
