// The controller's read model of a reservation: its row with its binding and its change in flight
// (ReservationRecord), read by key or for a batch of claimed deliveries; the admission id → tenant
// lookup of the operator's tools; and the periodic resync's paging over the open reservations.
// Reads only. Every statement names the tenant or runs on one shard (ledger/shards.ts).
import type { Db, Queryable, Row } from '../../ledger/db.ts';
import { autoscaleIdentity } from '../../schema/autoscale.ts';
import { bool, failureOrNull, int, intOrNull, json, str, stringListOrNull, strOrNull, time, timeOrNull } from '../../ledger/columns.ts';
import { amountColumns, amountsFromRow } from '../../ledger/resources.ts';
import { releaseBlockedReasonOrNull, reservationState } from '../../ledger/rows.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { RECONCILED_STATES, type ReleaseBlockedReason } from '../../schema/admission.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import type { ReservationRow } from './decide.ts';
import { reservationKey, type ReservationKey } from './key.ts';
import type { Progress } from './progress.ts';
import { roomOfRow, type Room } from '../../ledger/placement.ts';

export interface ReservationRecord extends ReservationRow {
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
  /** The cluster it is placed on (reservation.cluster: `default` on an install without registered clusters). */
  cluster: string;
  /** The cluster's room it holds (null: none reserved, the unregistered cluster or never charged). */
  room: Room | null;
  binding: (ReservationRow['binding'] & { namespace: string; crName: string; firstReadyAt: Date | null } & Progress) | null;
}

const date = (v: unknown): Date => new Date(time(v));
const dateOrNull = (v: unknown): Date | null => {
  const t = timeOrNull(v);
  return t === null ? null : new Date(t);
};

/** A reservation with its binding and its change in flight; callers add the WHERE. */
const RECORD_SELECT = `SELECT r.id, r.tenant, r.state, r.state_changed_at, r.release_blocked_since, r.created_at, r.request_id, r.spec, r.last_reconciled_at, r.cluster, r.room_anchor,
            r.release_blocked_reason, r.release_blocked_pods, r.release_blocked_finalizers, ${amountColumns('r')},
            r.generation, r.applied_generation, r.settled_generation, c.from_replicas,
            b.namespace, b.cr_name, b.uid, b.ever_ready, b.first_ready_at, b.scheduled_at, b.started_at, b.last_failure, b.reservation_id AS bound
       FROM reservation r LEFT JOIN binding b ON b.tenant = r.tenant AND b.reservation_id = r.id
       LEFT JOIN reservation_change c ON c.tenant = r.tenant AND c.reservation_id = r.id AND c.generation = r.generation`;

export async function loadReservationRecord(q: Queryable, key: ReservationKey): Promise<ReservationRecord | undefined> {
  const r = await q.execute(`${RECORD_SELECT} WHERE r.tenant = ? AND r.id = ?`, [key.tenant, key.id]);
  const row = r.rows[0];
  return row ? recordFromRow(row) : undefined;
}

/**
 * The records of several reservations in ONE statement (the poller's read of the deliveries it
 * just claimed, on the shard it claimed them from). Only the exact keys asked for are returned.
 */
export async function loadReservationRecords(q: Queryable, keys: readonly ReservationKey[]): Promise<ReservationRecord[]> {
  if (keys.length === 0) return [];
  const wanted = new Set(keys.map(reservationKey));
  const r = await q.execute(`${RECORD_SELECT} WHERE r.tenant IN (?) AND r.id IN (?)`, [[...new Set(keys.map((k) => k.tenant))], keys.map((k) => k.id)]);
  return r.rows.map(recordFromRow).filter((rec) => wanted.has(reservationKey(rec)));
}

function recordFromRow(row: Row): ReservationRecord {
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
      autoscale: autoscaleOf(spec),
      fromReplicas: intOrNull(row.from_replicas),
    },
    releaseBlockedReason: releaseBlockedReasonOrNull(row.release_blocked_reason),
    releaseBlockedPods: stringListOrNull(row.release_blocked_pods),
    releaseBlockedFinalizers: stringListOrNull(row.release_blocked_finalizers),
    amounts: amountsFromRow(row),
    lastReconciledAt: dateOrNull(row.last_reconciled_at),
    cluster: str(row.cluster),
    room: roomOfRow(row),
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

/** The stored spec's autoscale, as compared with the CR's (schema/autoscale.ts autoscaleIdentity). */
function autoscaleOf(spec: unknown): string | null {
  return autoscaleIdentity(typeof spec === 'object' && spec !== null ? (spec as { autoscale?: unknown }).autoscale : undefined);
}

/** Finds the tenant of an admission id (the operator's tools know only the id): one shard at a time. */
export async function tenantOf(db: Db, id: string): Promise<string | undefined> {
  for (const shard of await ledgerShards(db)) {
    const row = (await shard.db.execute('SELECT tenant FROM reservation WHERE id = ?', [id])).rows[0];
    if (row) return str(row.tenant);
  }
  return undefined;
}


/** Where a resync page starts: after this (last_reconciled_at, id); `reconciledAt` null: still among the never-reconciled. */
export interface ResyncCursor {
  reconciledAt: Date | null;
  id: string;
}
/** Where the reconciled ones start: before every real time (DATETIME's minimum). */
const NEVER = new Date('1000-01-01T00:00:00.000Z');

/**
 * One page of the open reservations on `cluster` not reconciled since `before`, stalest first: the never-reconciled
 * (by id), then by (last_reconciled_at, id), after `cursor`; the page that ends the never-reconciled
 * goes on with the reconciled ones (a second statement). Each page is a range of the index
 * `ix_reservation_reconciled (cluster, last_reconciled_at, id)` that starts where the last one ended, so a
 * whole pass reads each row once (an ORDER BY on an expression would sort every open row again for
 * every page: 100,000 rows read per page at 100,000 open, bench B8L). The periodic resync's scan:
 * it cannot name a tenant (it walks every tenant), so it runs on ONE shard (`q` is a shard's Db,
 * ledger/shards.ts); the page bounds each statement.
 */
export async function openReservationsPage(
  q: Queryable,
  o: { cluster: string; before: Date; after: ResyncCursor | null; limit: number },
): Promise<{ keys: ReservationKey[]; next: ResyncCursor | null }> {
  const after = o.after ?? { reconciledAt: null, id: '' };
  if (after.reconciledAt !== null) return reconciledPage(q, o.cluster, o.before, { reconciledAt: after.reconciledAt, id: after.id }, o.limit);
  const r = await q.execute(
    `SELECT tenant, id FROM reservation FORCE INDEX (ix_reservation_reconciled)
      WHERE cluster = ? AND last_reconciled_at IS NULL AND id > ? AND state IN (?)
      ORDER BY id LIMIT ?`,
    [o.cluster, after.id, RECONCILED_STATES, o.limit],
  );
  const keys = r.rows.map((row) => ({ tenant: str(row.tenant), id: str(row.id) }));
  const last = keys.at(-1);
  if (last && keys.length === o.limit) return { keys, next: { reconciledAt: null, id: last.id } };
  // The never-reconciled are done: the page goes on with the reconciled ones, from the start.
  const rest = await reconciledPage(q, o.cluster, o.before, { reconciledAt: NEVER, id: '' }, o.limit - keys.length);
  return { keys: [...keys, ...rest.keys], next: rest.next };
}

/**
 * A page of the admissions that left a stranded placement on `cluster` (a failover moved them
 * away), after `after` in (tenant, id) order: the resync enqueues them so that this cluster's
 * controller deletes what is left of them and frees the room (leftover.ts). One shard (`q`).
 */
export async function strandedPage(q: Queryable, o: { cluster: string; after: ReservationKey | null; limit: number }): Promise<ReservationKey[]> {
  const after = o.after ?? { tenant: '', id: '' };
  const r = await q.execute(
    `SELECT tenant, reservation_id FROM placement
      WHERE cluster = ? AND state = 'stranded' AND (tenant > ? OR (tenant = ? AND reservation_id > ?))
      ORDER BY tenant, reservation_id LIMIT ?`,
    [o.cluster, after.tenant, after.tenant, after.id, o.limit],
  );
  return r.rows.map((row) => ({ tenant: str(row.tenant), id: str(row.reservation_id) }));
}

/** Up to `limit` reconciled open reservations after `after` in (last_reconciled_at, id) order, all reconciled before `before`. */
async function reconciledPage(q: Queryable, cluster: string, before: Date, after: { reconciledAt: Date; id: string }, limit: number): Promise<{ keys: ReservationKey[]; next: ResyncCursor | null }> {
  const r = await q.execute(
    `SELECT tenant, id, last_reconciled_at FROM reservation FORCE INDEX (ix_reservation_reconciled)
      WHERE cluster = ? AND last_reconciled_at < ? AND (last_reconciled_at > ? OR (last_reconciled_at = ? AND id > ?)) AND state IN (?)
      ORDER BY last_reconciled_at, id LIMIT ?`,
    [cluster, before, after.reconciledAt, after.reconciledAt, after.id, RECONCILED_STATES, limit],
  );
  const keys = r.rows.map((row) => ({ tenant: str(row.tenant), id: str(row.id) }));
  const last = r.rows.at(-1);
  const at = last ? dateOrNull(last.last_reconciled_at) : null;
  const next = last && at && r.rows.length === limit ? { reconciledAt: at, id: str(last.id) } : null;
  return { keys, next };
}
