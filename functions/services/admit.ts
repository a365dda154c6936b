// Admission: ONE transaction inserts the reservation, the quota_movement charge and the
// outbox `create` row, then charges every resource of the tenant's quota in one conditional
// UPDATE (all-or-nothing), then reserves room on the cluster it is placed on (ledger/placement.ts:
// one conditional UPDATE of that cluster's allotment on the tenant's shard), then commits:
// BEGIN + 5 statements + COMMIT = 7 round trips (6 while no cluster is registered). The cluster is
// chosen before the transaction from the shard's cached view; a room taken meanwhile rolls back and
// the next attempt chooses again from a fresh read.
// The UNIQUE (tenant, idempotency_key) makes a retry — e.g. after a lost COMMIT reply —
// find the first admission instead of charging twice.
//
// With `onShortQuota: "queue"` the transaction first locks the tenant's quota rows: when the quota
// fits and nothing is queued it admits as above; otherwise it queues the admission (state
// `queued`, its place at the tenant's queue tail, no charge, no outbox row; functions/db/queue.ts)
// and the answer is 202 with its position and estimated wait. An admission larger than the
// tenant's hard limits is refused all the same: it could never be admitted.
import type { ParsedAdmission } from '../../schema/admission.ts';
import type { Shortfall } from '../../schema/api.ts';
import { crNameFor } from '../../schema/admission.ts';
import { sha256Hex } from '../auth/digest.ts';
import { isCrossShard } from '../../ledger/anchors.ts';
import { isDuplicateKey, isLockConflict } from '../../ledger/db.ts';
import { dedupeKey, enqueue } from '../../ledger/outbox.ts';
import type { Queryable } from '../../ledger/db.ts';
import { everFits, estimateWait, shortfalls } from '../../ledger/queue-pick.ts';
import { lockQuota, type TenantQuota } from '../../ledger/queue.ts';
import { addAmounts } from '../../ledger/resources.ts';
import { quotaRefusal } from '../db/quota.ts';
import { chargeQuota } from '../../ledger/charge.ts';
import { countQueued, queuedThrough, releaseRate } from '../db/queue.ts';
import { findByIdempotencyKey, insertReservation, type AdmissionRecord, type NewReservation } from '../db/reservations.ts';
import { idempotencyKeyReused, noClusterCapacity, quotaExceeded } from '../errors.ts';
import { chooseCluster, reserveRoom, type Choice, type Target } from '../../ledger/placement.ts';
import type { ServiceDeps } from './deps.ts';
import { timelineOf } from '../../schema/timeline.ts';
import { insertMovement } from '../../ledger/movements.ts';

const MAX_ATTEMPTS = 3;

export interface AdmitInput {
  tenant: string;
  idempotencyKey: string;
  requestId: string;
  parsed: ParsedAdmission;
}

export interface AdmitResult {
  /** `created` → 201; `queued` → 202 (waits for quota); `replayed` → 200 (same key, same body). */
  outcome: 'created' | 'queued' | 'replayed';
  admission: AdmissionRecord;
}

class DuplicateKey extends Error {}
class QuotaShort extends Error {}
/** The chosen cluster's room was taken between the (cached) read and the reserve: choose again from a fresh read. */
class RoomTaken extends Error {}
/** Larger than the tenant's hard limits: no release can ever make room for it. */
class NeverFits extends Error {
  readonly short: Shortfall[];
  constructor(short: Shortfall[]) {
    super('never fits');
    this.short = short;
  }
}

export async function admit(deps: ServiceDeps, input: AdmitInput): Promise<AdmitResult> {
  const requestHash = await sha256Hex(input.parsed.hashInput);
  for (let attempt = 1; ; attempt++) {
    try {
      const choice = await choose(deps, input, attempt > 1);
      if (input.parsed.queue) return await admitOrQueue(deps, input, requestHash, choice);
      if (choice.type === 'none') throw noClusterCapacity(choice.clusters);
      return { outcome: 'created', admission: await admitOnce(deps, input, requestHash, choice.target) };
    } catch (err) {
      if (err instanceof NeverFits) throw quotaExceeded(err.short);
      if (err instanceof RoomTaken && attempt >= MAX_ATTEMPTS) {
        const last = await choose(deps, input, true);
        throw noClusterCapacity(last.type === 'none' ? last.clusters : []);
      }
      if (err instanceof DuplicateKey) {
        const existing = await findByIdempotencyKey(deps.db, input.tenant, input.idempotencyKey);
        if (existing) {
          if (existing.requestHash !== requestHash) throw idempotencyKeyReused();
          return { outcome: 'replayed', admission: existing.admission };
        }
        // The conflicting admission vanished (cannot happen today: rows are never deleted); retry.
      } else if (err instanceof QuotaShort) {
        const refused = await quotaRefusal(deps.db, input.tenant, input.parsed.amounts);
        // A release may have landed between the rollback and the read: then try again.
        if (refused || attempt >= MAX_ATTEMPTS) throw quotaExceeded(refused?.short ?? [], refused?.queued ?? 0);
      } else if (isCrossShard(err)) {
        // The tenant's anchor came from a shard list older than a reshard (rolled back): re-read it.
        deps.placer.forgetShards();
      } else if (!(err instanceof RoomTaken) && (!isLockConflict(err) || attempt >= MAX_ATTEMPTS)) {
        throw err;
      }
      if (attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

/**
 * The cluster for this admission (ledger/placement.ts). The slow path (capacity borrowed from a
 * cluster's pool) runs only for an admission the tenant's quota takes: a doomed one moves nothing.
 */
async function choose(deps: ServiceDeps, input: AdmitInput, fresh: boolean): Promise<Choice> {
  const quota: { refused: Awaited<ReturnType<typeof quotaRefusal>> } = { refused: null };
  const quotaFits = async () => (quota.refused = await quotaRefusal(deps.db, input.tenant, input.parsed.amounts)) === null;
  const choice = await chooseCluster(deps.placer, deps.db, input.tenant, input.parsed.amounts, { fresh, by: 'worker', mayBorrow: quotaFits });
  // Short of quota as well as of room: the quota is what the tenant can act on (a queueing admission waits for both).
  if (choice.type === 'none' && quota.refused && !input.parsed.queue) throw quotaExceeded(quota.refused.short, quota.refused.queued);
  return choice;
}

async function admitOnce(deps: ServiceDeps, input: AdmitInput, requestHash: string, target: Target): Promise<AdmissionRecord> {
  const now = deps.clock();
  const id = deps.newId(now);
  await deps.db.transaction((tx) => writeAdmission(tx, input, requestHash, id, now, target));
  if (target.anchor) deps.placer.noteReserved({ anchor: target.anchor, cluster: target.cluster }, input.parsed.amounts);
  return admittedRecord(input, id, now, target.cluster);
}

/**
 * The admission's rows: reservation, charge movement, outbox `create` (routed to the cluster), then
 * the conditional charge, then the room on the cluster's allotment (last: the hottest row is locked
 * for the shortest time).
 */
async function writeAdmission(tx: Queryable, input: AdmitInput, requestHash: string, id: string, now: Date, target: Target): Promise<void> {
  const { tenant, parsed } = input;
  await insertNew(tx, input, requestHash, id, now, { target });
  await insertMovement(tx, { reservationId: id, tenant, generation: 1, direction: 'charge', amounts: parsed.amounts, now });
  await enqueue(tx, [{ tenant, reservationId: id, kind: 'create', dedupeKey: dedupeKey.create(id), requestId: input.requestId, cluster: target.cluster }], now);
  if (!(await chargeQuota(tx, tenant, parsed.amounts, now))) throw new QuotaShort();
  if (target.anchor !== null && !(await reserveRoom(tx, { anchor: target.anchor, cluster: target.cluster }, parsed.amounts, ['open'], now))) throw new RoomTaken();
}

async function insertNew(tx: Queryable, input: AdmitInput, requestHash: string, id: string, now: Date, at: Pick<NewReservation, 'queue' | 'target'>): Promise<void> {
  const { tenant, parsed } = input;
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
      ...at,
    });
  } catch (err) {
    throw isDuplicateKey(err) ? new DuplicateKey() : err;
  }
}

/**
 * The queueing admission, ONE transaction under the tenant's quota-row locks: admitted at once
 * when it fits, nothing is queued and a cluster has room; else queued at the tail with the wait
 * estimated from the tenant's recent releases (a queued admission is placed when it leaves the queue).
 */
async function admitOrQueue(deps: ServiceDeps, input: AdmitInput, requestHash: string, choice: Choice): Promise<AdmitResult> {
  const now = deps.clock();
  const id = deps.newId(now);
  const { tenant, parsed } = input;
  const ttl = parsed.queue?.ttlSeconds ?? null;
  const queued = await deps.db.transaction(async (tx) => {
    const locked = await lockQuota(tx, tenant);
    if (locked.queued === 0 && shortfalls(parsed.amounts, locked.quota).length === 0 && choice.type === 'place') {
      await writeAdmission(tx, input, requestHash, id, now, choice.target);
      return null;
    }
    if (!everFits(parsed.amounts, locked.quota)) throw new NeverFits(shortfalls(parsed.amounts, hardOnly(locked.quota)));
    const ahead = await queuedThrough(tx, tenant, locked.queueTail);
    const estimate = estimateWait(addAmounts(ahead.needed, parsed.amounts), locked.quota, await releaseRate(tx, tenant, now));
    const expiresAt = ttl === null ? null : new Date(now.getTime() + ttl * 1000);
    await insertNew(tx, input, requestHash, id, now, { queue: { seq: locked.queueTail + 1, expiresAt, estimateMs: estimate.seconds === null ? null : estimate.seconds * 1000 } });
    await countQueued(tx, tenant, now);
    return { position: ahead.count + 1, estimate, expiresAt };
  });
  const record = admittedRecord(input, id, now, choice.type === 'place' ? choice.target.cluster : null);
  if (!queued) return { outcome: 'created', admission: record };
  const at = now.toISOString();
  return {
    outcome: 'queued',
    admission: {
      ...record,
      state: 'queued',
      chargedReplicas: 0,
      cluster: null,
      nextAttemptAt: null,
      queue: {
        position: queued.position,
        estimate: queued.estimate,
        queuedAt: at,
        expiresAt: queued.expiresAt?.toISOString() ?? null,
        bypassed: 0,
        leftAt: null,
        estimatedWaitAtQueueing: queued.estimate.seconds,
      },
    },
  };
}

/** The limits alone (nothing used): what a request beyond them is short of for good. */
const hardOnly = (quota: TenantQuota): TenantQuota => Object.fromEntries(Object.entries(quota).map(([r, q]) => [r, { hard: q.hard, used: 0 }]));

/** An admission as admitOnce leaves it: admitted and charged now on `cluster`, its create row due at once. */
function admittedRecord(input: AdmitInput, id: string, now: Date, cluster: string | null): AdmissionRecord {
  const { tenant, parsed } = input;
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
    cluster,
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
    queue: null,
    lastFailure: null,
    autoscaleStatus: null,
  };
}
