// SQL of the reservation family: reservation (+ its binding and dead outbox rows for reads)
// and quota_movement. No business rules here: services decide, these statements execute.
import type { Amounts, ModelServiceSpec } from '../../schema/model-service.ts';
import { timelineOf } from '../../schema/timeline.ts';
import { readLastError } from '../../schema/tenant-errors.ts';
import { chargedReplicasOf, pendingChangeOf, type ChangeProgress } from '../../schema/scale.ts';
import { ACTIVE_STATES, crNameFor, holdsCharge, NEVER_CHARGED_STATES, type ReservationState } from '../../schema/admission.ts';
import type { Admission } from '../../schema/api.ts';
import { autoscaleStatusOf } from '../../ledger/autoscale-change.ts';
import { bool, failureOrNull, int, intOrNull, json, str, stringListOrNull, strOrNull, time, timeOrNull } from '../../ledger/columns.ts';
import type { Queryable, Row } from '../../ledger/db.ts';
import { amountArgs, amountColumns, amountsFromRow, RESOURCE_NAMES } from '../../ledger/resources.ts';
import { releaseBlockedReasonOrNull, reservationState } from '../../ledger/rows.ts';
import { UNREGISTERED_CLUSTER } from '../../ledger/clusters.ts';
import { roomOfRow, type Room, type Target } from '../../ledger/placement.ts';

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

export interface NewReservation {
  id: string;
  tenant: string;
  idempotencyKey: string;
  requestHash: string;
  name: string;
  spec: ModelServiceSpec;
  amounts: Amounts;
  requestId: string;
  now: Date;
  /** Queued for quota instead of admitted: its place (seq), TTL and the wait estimated for it. */
  queue?: { seq: number; expiresAt: Date | null; estimateMs: number | null };
  /** Where it is placed (admitted): the cluster, and the anchor whose allotment holds its room (null: none reserved); a queued one is placed when it leaves the queue. */
  target?: Target;
}

export async function insertReservation(q: Queryable, r: NewReservation): Promise<void> {
  await q.execute(
    `INSERT INTO reservation (id, tenant, idempotency_key, request_hash, name, spec, ${amountColumns()},
       state, request_id, created_at, updated_at, state_changed_at, queue_seq, queue_expires_at, queue_estimate_ms, cluster, room_anchor)
     VALUES (?, ?, ?, ?, ?, ?, ${placeholders(RESOURCE_NAMES.length)}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      r.id, r.tenant, r.idempotencyKey, r.requestHash, r.name, JSON.stringify(r.spec), ...amountArgs(r.amounts),
      r.queue ? 'queued' : 'admitted', r.requestId, r.now, r.now, r.now, r.queue?.seq ?? null, r.queue?.expiresAt ?? null, r.queue?.estimateMs ?? null,
      r.target?.cluster ?? UNREGISTERED_CLUSTER, r.target?.anchor ?? null,
    ],
  );
}

/** One admission with its binding, current change and outbox facts; `hint` names the index `reservation r` is read by. */
const selectAdmission = (hint = '') => `SELECT r.id, r.tenant, r.name, r.state, r.spec, ${amountColumns('r')},
    r.generation, r.applied_generation, r.settled_generation, c.from_replicas AS c_from, c.to_replicas AS c_to, c.created_at AS c_at,
    r.request_id, r.request_hash, r.created_at, r.updated_at, r.state_changed_at, r.release_blocked_since, r.release_blocked_reason, r.release_blocked_pods, r.release_blocked_finalizers, r.last_error,
    r.queue_seq, r.queue_expires_at, r.queue_bypassed, r.queue_estimate_ms, r.dequeued_at, r.autoscale_status, r.cluster, r.room_anchor,
    b.namespace AS b_namespace, b.cr_name AS b_cr_name, b.uid AS b_uid, b.ever_ready AS b_ever_ready,
    b.first_ready_at AS b_first_ready_at, b.created_at AS b_created_at, b.scheduled_at AS b_scheduled_at, b.started_at AS b_started_at, b.last_failure AS b_last_failure,
    (SELECT COUNT(*) FROM outbox o WHERE o.tenant = r.tenant AND o.reservation_id = r.id AND o.dead_at IS NOT NULL) AS dead_outbox,
    (SELECT MIN(o.available_at) FROM outbox o WHERE o.tenant = r.tenant AND o.reservation_id = r.id AND o.done_at IS NULL AND o.dead_at IS NULL) AS next_attempt_at,
    (SELECT o.last_error FROM outbox o WHERE o.tenant = r.tenant AND o.reservation_id = r.id AND o.done_at IS NULL AND o.dead_at IS NULL AND o.last_error IS NOT NULL
      ORDER BY o.seq DESC LIMIT 1) AS retry_error
  FROM reservation r${hint} LEFT JOIN binding b ON b.tenant = r.tenant AND b.reservation_id = r.id
    LEFT JOIN reservation_change c ON c.tenant = r.tenant AND c.reservation_id = r.id AND c.generation = r.generation`;
const SELECT_ADMISSION = selectAdmission();
/**
 * A page of the list reads exactly its rows: a range of (tenant, id) from the cursor down. Left to
 * itself MariaDB reads a cursor page by `ref` on the tenant and walks back from the tenant's newest
 * reservation to the cursor, so a page cost as much as every admission newer than it (released
 * ones included) — deeper pages, more rows.
 */
const SELECT_PAGE = selectAdmission(' FORCE INDEX (ix_reservation_tenant_id)');


/**
 * An admission as the ledger holds it: all the API shows but `endpoint`, the tenant-facing URL,
 * which depends on where the API is reached and is added where a response is built
 * (functions/tenant-url.ts). Without it the type says so: a response cannot forget it.
 */
export type AdmissionRecord = Omit<Admission, 'endpoint'>;

export interface StoredAdmission {
  admission: AdmissionRecord;
  requestHash: string;
  /** Its place in the tenant's queue (null: it was never queued). */
  queueSeq: number | null;
  /** The cluster's room it holds (null: none reserved). */
  room: Room | null;
  /** The cluster its outbox rows go to (the stored column: `default` until it is placed). */
  routedTo: string;
}

function toStored(row: Row): StoredAdmission {
  const id = str(row.id);
  // The error a pending outbox row (a delivery in an outage) is being retried for is the current
  // one; otherwise the reason of the reservation's last transition. Code and message apart,
  // printable and bounded whoever wrote them.
  const lastError = readLastError(strOrNull(row.retry_error) ?? strOrNull(row.last_error));
  const state = reservationState(row.state);
  const spec = json(row.spec) as ModelServiceSpec;
  const change: ChangeProgress = {
    generation: int(row.generation),
    appliedGeneration: int(row.applied_generation),
    settledGeneration: int(row.settled_generation),
    latest: row.c_from === null || row.c_from === undefined ? null : { fromReplicas: int(row.c_from), toReplicas: int(row.c_to), requestedAt: time(row.c_at) },
  };
  return {
    requestHash: str(row.request_hash),
    queueSeq: intOrNull(row.queue_seq),
    room: roomOfRow(row),
    routedTo: str(row.cluster),
    admission: {
      id,
      tenant: str(row.tenant),
      name: str(row.name),
      state,
      spec,
      amounts: amountsFromRow(row),
      replicas: spec.replicas,
      chargedReplicas: holdsCharge(state) ? chargedReplicasOf(spec.replicas, change) : 0,
      generation: change.generation,
      pendingChange: pendingChangeOf(change, (ACTIVE_STATES as readonly string[]).includes(state)),
      crName: crNameFor(id),
      cluster: (NEVER_CHARGED_STATES as readonly string[]).includes(state) ? null : str(row.cluster),
      requestId: str(row.request_id),
      createdAt: time(row.created_at),
      updatedAt: time(row.updated_at),
      stateChangedAt: time(row.state_changed_at),
      binding:
        row.b_namespace === null || row.b_namespace === undefined
          ? null
          : {
              namespace: str(row.b_namespace),
              crName: str(row.b_cr_name),
              uid: strOrNull(row.b_uid),
              everReady: bool(row.b_ever_ready),
              firstReadyAt: timeOrNull(row.b_first_ready_at),
            },
      releaseBlockedSince: timeOrNull(row.release_blocked_since),
      releaseBlockedReason: releaseBlockedReasonOrNull(row.release_blocked_reason),
      releaseBlockedPods: stringListOrNull(row.release_blocked_pods),
      releaseBlockedFinalizers: stringListOrNull(row.release_blocked_finalizers),
      lastError: lastError?.message ?? null,
      lastErrorCode: lastError?.code ?? null,
      nextAttemptAt: timeOrNull(row.next_attempt_at),
      deadOutboxRows: int(row.dead_outbox),
      timeline: timelineOf(time(row.created_at), {
        deliveredAt: timeOrNull(row.b_created_at),
        scheduledAt: timeOrNull(row.b_scheduled_at),
        startedAt: timeOrNull(row.b_started_at),
        readyAt: timeOrNull(row.b_first_ready_at),
      }),
      queue: queueInfoOf(row),
      lastFailure: failureOrNull(row.b_last_failure),
      autoscaleStatus: spec.autoscale ? autoscaleStatusOf(row.autoscale_status) : null,
    },
  };
}

/** The queue columns as the API shows them; position and estimate are filled in by the reads that compute them (functions/services/queue.ts). */
function queueInfoOf(row: Row): AdmissionRecord['queue'] {
  if (row.queue_seq === null || row.queue_seq === undefined) return null;
  const estimateMs = intOrNull(row.queue_estimate_ms);
  return {
    position: null,
    estimate: null,
    queuedAt: time(row.created_at),
    expiresAt: timeOrNull(row.queue_expires_at),
    bypassed: int(row.queue_bypassed),
    leftAt: timeOrNull(row.dequeued_at),
    estimatedWaitAtQueueing: estimateMs === null ? null : Math.round(estimateMs / 1000),
  };
}

export async function findById(q: Queryable, tenant: string, id: string): Promise<StoredAdmission | undefined> {
  const r = await q.execute(`${SELECT_ADMISSION} WHERE r.tenant = ? AND r.id = ?`, [tenant, id]);
  return r.rows[0] ? toStored(r.rows[0]) : undefined;
}

export async function findByIdempotencyKey(q: Queryable, tenant: string, key: string): Promise<StoredAdmission | undefined> {
  const r = await q.execute(`${SELECT_ADMISSION} WHERE r.tenant = ? AND r.idempotency_key = ?`, [tenant, key]);
  return r.rows[0] ? toStored(r.rows[0]) : undefined;
}

/** Newest first; `before` is an exclusive id cursor. Returns up to `limit` rows. */
export async function listByTenant(q: Queryable, tenant: string, limit: number, before?: string): Promise<AdmissionRecord[]> {
  const r = before
    ? await q.execute(`${SELECT_PAGE} WHERE r.tenant = ? AND r.id < ? ORDER BY r.id DESC LIMIT ?`, [tenant, before, limit])
    : await q.execute(`${SELECT_PAGE} WHERE r.tenant = ? ORDER BY r.id DESC LIMIT ?`, [tenant, limit]);
  return r.rows.map((row) => toStored(row).admission);
}

/** Guarded transition to `deleting`: true when this call moved it. */
export async function markDeleting(q: Queryable, tenant: string, id: string, from: readonly ReservationState[], now: Date): Promise<boolean> {
  const r = await q.execute(
    `UPDATE reservation SET state = 'deleting', state_changed_at = ?, updated_at = ?, delete_requested_at = ?
     WHERE tenant = ? AND id = ? AND state IN (?)`,
    [now, now, now, tenant, id, [...from]],
  );
  return r.rowsAffected === 1;
}

