// A change of replicas (PATCH /requests/:id). ONE transaction moves the reservation to its next
// generation with the new spec, records the change (and its Idempotency-Key), and enqueues the
// outbox `scale` row; an increase also charges its delta — a `charge` movement of this generation
// and the tenant's quota in one conditional UPDATE, all or nothing (409 quota_exceeded otherwise,
// nothing changed), then reserves the delta on the room its cluster holds for it (ledger/placement.ts;
// 409 cluster_capacity_exceeded when the cluster has no room, nothing changed). A decrease keeps its
// charge: the controller refunds the delta once the surplus pods are gone. BEGIN + 3 (decrease) or
// 5 (increase; 6 with a room) statements + COMMIT.
//
// A change to the replicas the admission already has writes one row only, the change row at
// generation 0 (NOOP_GENERATION), which binds the Idempotency-Key to its body like any change's:
// the same key and body replays the 200, the same key with another body is 422.
//
// Deterministic against DELETE: the generation moves only while the admission runs, so a DELETE
// that committed first wins (409 here); a change committed first is superseded by the DELETE — a
// pending increase is given back with the release, a pending decrease is part of it.
import { ACTIVE_STATES } from '../../schema/admission.ts';
import { canonicalJson } from '../../schema/canonical-json.ts';
import { chargedReplicasOf, pendingChangeOf, scaleDelta, type ChangeProgress } from '../../schema/scale.ts';
import { NO_AMOUNTS, REPLICA_RESOURCES, type Amounts, type ModelServiceSpec } from '../../schema/model-service.ts';
import { clampReplicas, type AutoscaleSpec } from '../../schema/autoscale.ts';
import { isDuplicateKey, isLockConflict } from '../../ledger/db.ts';
import { dedupeKey, enqueue } from '../../ledger/outbox.ts';
import { sha256Hex } from '../auth/digest.ts';
import { advanceGeneration, findChangeByKey, insertChange, NOOP_GENERATION } from '../../ledger/change.ts';
import { quotaRefusal } from '../db/quota.ts';
import { chargeQuota } from '../../ledger/charge.ts';
import { findById, type AdmissionRecord } from '../db/reservations.ts';
import { ApiError, clusterCapacityExceeded, idempotencyKeyReused, notFound, quotaExceeded } from '../errors.ts';
import { ensureRoom, GROW_MODES, reserveRoom, type Room } from '../../ledger/placement.ts';
import type { ServiceDeps } from './deps.ts';
import { insertMovement } from '../../ledger/movements.ts';

const MAX_ATTEMPTS = 3;

export interface ScaleInput {
  tenant: string;
  id: string;
  idempotencyKey: string;
  requestId: string;
  /** The new replicas (absent: as they are, or moved into the new autoscale range). */
  replicas?: number;
  /** The new autoscaling spec; null stops autoscaling; absent leaves it as it is. */
  autoscale?: AutoscaleSpec | null;
}

export interface ScaleResult {
  /** `accepted` → 202 (a new generation); `replayed` (same key, same body) and `unchanged` (already at these replicas: only its key is recorded) → 200. */
  outcome: 'accepted' | 'replayed' | 'unchanged';
  admission: AdmissionRecord;
}

class Raced extends Error {}
class RoomShort extends Error {}
class QuotaShort extends Error {
  readonly delta: Amounts;
  constructor(delta: Amounts) {
    super('quota short');
    this.delta = delta;
  }
}

export async function scaleAdmission(deps: ServiceDeps, input: ScaleInput): Promise<ScaleResult> {
  // The body as given: a key that only ever changed replicas hashes as it always did.
  const requestHash = await sha256Hex(
    canonicalJson({ ...(input.replicas === undefined ? {} : { replicas: input.replicas }), ...(input.autoscale === undefined ? {} : { autoscale: input.autoscale }) }),
  );
  for (let attempt = 1; ; attempt++) {
    // Independent reads (both by tenant and id): one round trip of latency, not two.
    const [found, prior] = await Promise.all([
      findById(deps.db, input.tenant, input.id),
      findChangeByKey(deps.db, input.tenant, input.id, input.idempotencyKey),
    ]);
    if (!found) throw notFound('admission');
    if (prior) {
      if (prior.requestHash !== requestHash) throw idempotencyKeyReused();
      return { outcome: 'replayed', admission: found.admission };
    }
    const a = found.admission;
    if (!(ACTIVE_STATES as readonly string[]).includes(a.state)) throw notRunning(a.state);
    if (a.pendingChange) throw changePending(a);
    const target = targetOf(a.spec, input);
    try {
      if (a.replicas === target.replicas && canonicalJson(a.spec.autoscale ?? null) === canonicalJson(target.autoscale ?? null)) {
        await bindNoop(deps, input, a.replicas, requestHash);
        return { outcome: 'unchanged', admission: a };
      }
      return { outcome: 'accepted', admission: await changeOnce(deps, input, a, target, requestHash, found.room, found.routedTo) };
    } catch (err) {
      if (err instanceof RoomShort && found.room) throw clusterCapacityExceeded(found.room.cluster);
      if (err instanceof QuotaShort) {
        const refused = await quotaRefusal(deps.db, input.tenant, err.delta);
        // A release may have landed between the rollback and the read: then try again.
        if (refused || attempt >= MAX_ATTEMPTS) throw quotaExceeded(refused?.short ?? [], refused?.queued ?? 0);
      } else if (!(err instanceof Raced) && !isLockConflict(err)) {
        throw err;
      }
      // Raced (a DELETE, another change, or the same key from a concurrent retry) or a lock
      // conflict: read again and decide again.
      if (attempt >= MAX_ATTEMPTS) throw err instanceof Raced ? new ApiError(409, 'change_pending', 'the admission changed while this request ran; retry') : err;
    }
  }
}

/** Binds the key of a change that changes nothing: its row at generation 0 (a duplicate key: the same key raced in, decide again). */
async function bindNoop(deps: ServiceDeps, input: ScaleInput, replicas: number, requestHash: string): Promise<void> {
  try {
    await insertChange(deps.db, {
      tenant: input.tenant,
      reservationId: input.id,
      generation: NOOP_GENERATION,
      idempotencyKey: input.idempotencyKey,
      requestHash,
      fromReplicas: replicas,
      toReplicas: replicas,
      requestId: input.requestId,
      now: deps.clock(),
    });
  } catch (err) {
    throw isDuplicateKey(err) ? new Raced() : err;
  }
}

/**
 * The spec the change asks for. A manual change of replicas is refused while the admission
 * autoscales (the autoscaler would undo it); a new autoscale range moves the replicas into it.
 */
function targetOf(spec: ModelServiceSpec, input: ScaleInput): ModelServiceSpec {
  const autoscale = input.autoscale === undefined ? spec.autoscale : (input.autoscale ?? undefined);
  if (input.replicas !== undefined && input.autoscale === undefined && spec.autoscale) throw autoscaled(spec.autoscale);
  const replicas = input.replicas ?? (autoscale && input.autoscale ? clampReplicas(autoscale, spec.replicas) : spec.replicas);
  const { autoscale: _, ...rest } = spec;
  return autoscale ? { ...rest, replicas, autoscale } : { ...rest, replicas };
}

/** Runs the change's transaction; returns the admission as it left it (the read + what it wrote: no second read). */
async function changeOnce(deps: ServiceDeps, input: ScaleInput, a: AdmissionRecord, spec: ModelServiceSpec, requestHash: string, room: Room | null, routedTo: string): Promise<AdmissionRecord> {
  const now = deps.clock();
  const { tenant, id } = input;
  const generation = a.generation + 1;
  const increase = spec.replicas > a.replicas;
  const delta = scaleDelta(a.spec, a.replicas, spec.replicas);
  const charge: Readonly<Amounts> = increase ? delta : NO_AMOUNTS;
  // An increase its quota takes but its cluster's room on this shard lacks: borrow first (the slow path of placement).
  if (increase && room) await ensureRoom(deps.placer, deps.db, room, { one: delta, units: 1, partial: false }, 'worker', async () => (await quotaRefusal(deps.db, tenant, delta)) === null);
  await deps.db.transaction(async (tx) => {
    if (!(await advanceGeneration(tx, { tenant, id, from: a.generation, spec, charge, now }))) throw new Raced();
    try {
      await insertChange(tx, {
        tenant,
        reservationId: id,
        generation,
        idempotencyKey: input.idempotencyKey,
        requestHash,
        fromReplicas: a.replicas,
        toReplicas: spec.replicas,
        requestId: input.requestId,
        now,
      });
    } catch (err) {
      throw isDuplicateKey(err) ? new Raced() : err;
    }
    await enqueue(tx, [{ tenant, reservationId: id, kind: 'scale', dedupeKey: dedupeKey.scale(id, generation), requestId: input.requestId, cluster: routedTo }], now);
    if (increase) {
      await insertMovement(tx, { reservationId: id, tenant, generation, direction: 'charge', amounts: delta, now });
      // Last, so the tenant's quota rows stay locked for as short a time as possible.
      if (!(await chargeQuota(tx, tenant, delta, now))) throw new QuotaShort(delta);
      // The room last (the hottest row): set when the admission was placed, it does not move while the generation holds.
      if (room && !(await reserveRoom(tx, room, delta, GROW_MODES, now))) throw new RoomShort();
    }
  });
  const at = now.toISOString();
  // The previous generation was settled (no change pending), the new one is neither applied nor settled.
  const change: ChangeProgress = {
    generation,
    appliedGeneration: a.generation,
    settledGeneration: a.generation,
    latest: { fromReplicas: a.replicas, toReplicas: spec.replicas, requestedAt: at },
  };
  return {
    ...a,
    spec,
    replicas: spec.replicas,
    amounts: { ...a.amounts, ...Object.fromEntries(REPLICA_RESOURCES.map((r) => [r, a.amounts[r] + charge[r]])) },
    generation,
    chargedReplicas: chargedReplicasOf(spec.replicas, change),
    pendingChange: pendingChangeOf(change, true),
    updatedAt: at,
    // The new scale row is due at once.
    nextAttemptAt: a.nextAttemptAt !== null && a.nextAttemptAt < at ? a.nextAttemptAt : at,
  };
}

const notRunning = (state: string) =>
  new ApiError(409, 'conflict', `this admission is ${state}: only an admitted, delivered or ready admission can change its replicas`);

const autoscaled = (s: AutoscaleSpec) =>
  new ApiError(
    409,
    'autoscaled',
    `this admission autoscales between ${s.minReplicas} and ${s.maxReplicas} replicas: change autoscale (its range), or set autoscale to null to set replicas yourself`,
  );

const changePending = (a: AdmissionRecord) =>
  new ApiError(
    409,
    'change_pending',
    `a change of replicas is still in flight (generation ${a.pendingChange?.generation}: ${a.pendingChange?.fromReplicas} → ${a.pendingChange?.toReplicas}, ${a.pendingChange?.phase}); retry once it is done`,
    { pendingChange: a.pendingChange },
  );
