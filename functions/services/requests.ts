// Reading and deleting a tenant's admissions. Every lookup is scoped by tenant: another
// tenant's id is indistinguishable from a missing one (404).
import { ACTIVE_STATES } from '../../schema/admission.ts';
import { dedupeKey, enqueue } from '../../ledger/outbox.ts';
import { retryLockConflicts } from '../../ledger/db.ts';
import { findById, listByTenant, markDeleting, type AdmissionRecord } from '../db/reservations.ts';
import { ApiError, notFound } from '../errors.ts';
import type { ServiceDeps } from './deps.ts';
import { lockQuota } from '../../ledger/queue.ts';
import { cancelQueued } from '../db/queue.ts';
import { dequeueByWorker, withQueuePlace } from './queue.ts';
import { jsonLogger } from '../middleware/log.ts';

export async function getAdmission(deps: ServiceDeps, tenant: string, id: string): Promise<AdmissionRecord> {
  const found = await findById(deps.db, tenant, id);
  if (!found) throw notFound('admission');
  return withQueuePlace(deps, found.admission, found.queueSeq);
}

export async function listAdmissions(
  deps: ServiceDeps,
  tenant: string,
  opts: { limit: number; cursor?: string | undefined },
): Promise<{ items: AdmissionRecord[]; nextCursor: string | null }> {
  const rows = await listByTenant(deps.db, tenant, opts.limit + 1, opts.cursor);
  const items = rows.slice(0, opts.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > opts.limit && last ? last.id : null };
}

/**
 * Moves an active admission to `deleting` and enqueues one outbox `delete` row, in one
 * transaction. Idempotent: an admission already deleting, releasing or released is
 * returned as it is. A `conflict` that never had a CR bound (refused at delivery, e.g. by the
 * image policy) is deletable too: the controller releases it only on evidence that nothing of
 * ours exists under its name, and returns it to `conflict` if a foreign object sits there. A
 * conflict with a bound CR is refused (an operator must resolve it).
 */
export async function deleteAdmission(deps: ServiceDeps, tenant: string, id: string, requestId: string): Promise<AdmissionRecord> {
  const found = await findById(deps.db, tenant, id);
  if (!found) throw notFound('admission');
  if (found.admission.state === 'queued') {
    const cancelled = await cancel(deps, found.admission, requestId);
    if (cancelled) return cancelled;
    return deleteAdmission(deps, tenant, id, requestId); // admitted (or expired) in between: what it is now decides
  }
  const state = found.admission.state;
  const unboundConflict = state === 'conflict' && found.admission.binding === null;
  if (state === 'conflict' && !unboundConflict) throw conflictError();
  if (!unboundConflict && !(ACTIVE_STATES as readonly string[]).includes(state)) return found.admission;

  const now = deps.clock();
  // A deadlock with a controller's acknowledgement (each locks a reservation and outbox index
  // entries, in its own order) is transient: the guarded transaction runs again.
  const moved = await retryLockConflicts(() =>
    deps.db.transaction(async (tx) => {
      if (!(await markDeleting(tx, tenant, id, unboundConflict ? ['conflict'] : ACTIVE_STATES, now))) return undefined;
      return { enqueued: (await enqueue(tx, [{ tenant, reservationId: id, kind: 'delete', dedupeKey: dedupeKey.delete(id), requestId, cluster: found.routedTo }], now)) > 0 };
    }),
  );
  // This call moved it: the answer is what was read plus what the transaction changed (no second
  // read). Otherwise something else moved it in between: read what it is now.
  if (moved) return asDeleting(found.admission, now, moved.enqueued);
  const after = await findById(deps.db, tenant, id);
  if (!after) throw notFound('admission');
  if (after.admission.state === 'conflict') throw conflictError();
  return after.admission;
}

/**
 * Cancels a queued admission: queued → cancelled under the tenant's quota-row locks, never charged.
 * Exactly one of this and the dequeue moves it (both are guarded on state = 'queued' under the
 * same locks). Then lets the queue behind it move up: with it gone, the next may fit.
 */
async function cancel(deps: ServiceDeps, a: AdmissionRecord, requestId: string): Promise<AdmissionRecord | undefined> {
  const now = deps.clock();
  const moved = await deps.db.transaction(async (tx) => {
    await lockQuota(tx, a.tenant);
    return cancelQueued(tx, a.tenant, a.id, now);
  });
  if (!moved) return undefined;
  // The cancel is committed: the tenant's answer does not hang on what follows. A dequeue that fails
  // here is logged; the controller's queue sweep and the cron sweep let the queue move up instead.
  await dequeueByWorker(deps, a.tenant, requestId).catch((err: unknown) =>
    jsonLogger({ level: 'warn', msg: 'dequeue after a cancel failed: the sweeps retry it', reqId: requestId, tenant: a.tenant, admissionId: a.id, error: err instanceof Error ? err.message : String(err) }),
  );
  const at = now.toISOString();
  return { ...a, state: 'cancelled', stateChangedAt: at, updatedAt: at, queue: a.queue && { ...a.queue, position: null, estimate: null, leftAt: at } };
}

/** An admission as markDeleting (+ a new delete row, due at once) leaves it: deleting since `now`, no change pending (and so no endpoint). */
function asDeleting(a: AdmissionRecord, now: Date, enqueued: boolean): AdmissionRecord {
  const at = now.toISOString();
  return { ...a, state: 'deleting', stateChangedAt: at, updatedAt: at, pendingChange: null, nextAttemptAt: enqueued && (a.nextAttemptAt === null || at < a.nextAttemptAt) ? at : a.nextAttemptAt };
}

const conflictError = () =>
  new ApiError(409, 'conflict', 'this admission is in conflict (its CR carries another identity); an operator must resolve it');

