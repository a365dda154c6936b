// Admission: ONE transaction inserts the reservation, the quota_movement charge and the
// outbox `create` row, then charges every resource of the tenant's quota in one conditional
// UPDATE (all-or-nothing), then commits: BEGIN + 4 statements + COMMIT = 6 round trips.
// The UNIQUE (tenant, idempotency_key) makes a retry — e.g. after a lost COMMIT reply —
// find the first admission instead of charging twice.
import type { ParsedAdmission } from '../../schema/admission.ts';
import { RESOURCE_NAMES, type Amounts } from '../../schema/model-service.ts';
import type { Shortfall } from '../../schema/api.ts';
import { crNameFor } from '../../schema/admission.ts';
import { sha256Hex } from '../auth/digest.ts';
import { isDuplicateKey, isLockConflict } from '../../ledger/db.ts';
import { enqueue } from '../db/outbox.ts';
import { dedupeKey } from '../../ledger/outbox.ts';
import { chargeQuota, readQuota } from '../db/quota.ts';
import { findByIdempotencyKey, insertMovement, insertReservation, type AdmissionRecord } from '../db/reservations.ts';
import { idempotencyKeyReused, quotaExceeded } from '../errors.ts';
import type { ServiceDeps } from './deps.ts';
import { timelineOf } from '../../schema/timeline.ts';

const MAX_ATTEMPTS = 3;

export interface AdmitInput {
  tenant: string;
  idempotencyKey: string;
  requestId: string;
  parsed: ParsedAdmission;
}

export interface AdmitResult {
  /** `created` → 201; `replayed` → 200 (same key, same body). */
  outcome: 'created' | 'replayed';
  admission: AdmissionRecord;
}

class DuplicateKey extends Error {}
class QuotaShort extends Error {}

export async function admit(deps: ServiceDeps, input: AdmitInput): Promise<AdmitResult> {
  const requestHash = await sha256Hex(input.parsed.hashInput);
  for (let attempt = 1; ; attempt++) {
    try {
      return { outcome: 'created', admission: await admitOnce(deps, input, requestHash) };
    } catch (err) {
      if (err instanceof DuplicateKey) {
        const existing = await findByIdempotencyKey(deps.db, input.tenant, input.idempotencyKey);
        if (existing) {
          if (existing.requestHash !== requestHash) throw idempotencyKeyReused();
          return { outcome: 'replayed', admission: existing.admission };
        }
        // The conflicting admission vanished (cannot happen today: rows are never deleted); retry.
      } else if (err instanceof QuotaShort) {
        const shortfalls = shortfallsOf(input.parsed.amounts, await readQuota(deps.db, input.tenant));
        // A release may have landed between the rollback and the read: then try again.
        if (shortfalls.length > 0 || attempt >= MAX_ATTEMPTS) throw quotaExceeded(shortfalls);
      } else if (!isLockConflict(err) || attempt >= MAX_ATTEMPTS) {
        throw err;
      }
      if (attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

async function admitOnce(deps: ServiceDeps, input: AdmitInput, requestHash: string): Promise<AdmissionRecord> {
  const now = deps.clock();
  const id = deps.newId(now);
  const { tenant, parsed } = input;
  await deps.db.transaction(async (tx) => {
    try {
      await insertReservation(tx, {
        id,
        tenant,
        idempotencyKey: input.idempotencyKey,
        requestHash,
        name: parsed.name,
        spec: parsed.spec,
        amounts: parsed.amounts,
        requestId: input.requestId,
        now,
      });
    } catch (err) {
      throw isDuplicateKey(err) ? new DuplicateKey() : err;
    }
    await insertMovement(tx, { reservationId: id, tenant, generation: 1, direction: 'charge', amounts: parsed.amounts, now });
    await enqueue(tx, [{ tenant, reservationId: id, kind: 'create', dedupeKey: dedupeKey.create(id), requestId: input.requestId }], now);
    // Last, so the tenant's quota rows stay locked for as short a time as possible.
    if (!(await chargeQuota(tx, tenant, parsed.amounts, now))) throw new QuotaShort();
  });
  const at = now.toISOString();
  return {
    id,
    tenant,
    name: parsed.name,
    state: 'admitted',
    spec: parsed.spec,
    amounts: parsed.amounts,
    replicas: parsed.spec.replicas,
    chargedReplicas: parsed.spec.replicas,
    generation: 1,
    pendingChange: null,
    crName: crNameFor(id),
    requestId: input.requestId,
    createdAt: at,
    updatedAt: at,
    stateChangedAt: at,
    binding: null,
    releaseBlockedSince: null,
    releaseBlockedReason: null,
    releaseBlockedPods: null,
    releaseBlockedFinalizers: null,
    lastError: null,
    lastErrorCode: null,
    nextAttemptAt: at, // the create row is due at once
    deadOutboxRows: 0,
    timeline: timelineOf(at, { deliveredAt: null, scheduledAt: null, startedAt: null, readyAt: null }),
    lastFailure: null,
  };
}

export function shortfallsOf(requested: Amounts, quota: Partial<Record<keyof Amounts, { hard: number; used: number }>>): Shortfall[] {
  return RESOURCE_NAMES.flatMap((resource) => {
    const want = requested[resource];
    if (want <= 0) return [];
    const q = quota[resource];
    const available = q ? Math.max(0, q.hard - q.used) : 0;
    return want > available ? [{ resource, requested: want, available, short: want - available }] : [];
  });
}
