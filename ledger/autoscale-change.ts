// The autoscaler's change of replicas, in ONE transaction on the tenant's shard — the same writes
// as a tenant's PATCH (ledger/change.ts): the next generation with the new replicas, its change
// row, the outbox `scale` row and, for a scale-up, the charge movement and the quota. So a scale-up
// is charged BEFORE the controller changes the ModelService (it does so only from the scale row),
// and a scale-down keeps its charge until the surplus pods are gone (the refund of the existing
// change path).
//
// A scale-up is granted as far as the quota allows (a partial grant): under the tenant's quota-row
// locks it takes the most replicas up to `want` whose delta fits, and reports the shortfall of the
// rest (QuotaLimited). Nothing passes a waiting queue: with admissions queued it grants nothing.
//
// Locks: the reservation row first (FOR UPDATE, like a PATCH's UPDATE), then the quota rows. The
// controller's move joins its fence: a deposed leader changes nothing.
//
// Also here: the one writer and reader of reservation.autoscale_status, what the autoscaler tells
// the tenant (fenced like every controller write).
import type { Shortfall } from '../schema/api.ts';
import { ACTIVE_STATES } from '../schema/admission.ts';
import { autoscaleStatusSchema, clampReplicas, type AutoscaleStatus } from '../schema/autoscale.ts';
import { NO_AMOUNTS, REPLICA_RESOURCES, type Amounts, type ModelServiceSpec } from '../schema/model-service.ts';
import { scaleDelta } from '../schema/scale.ts';
import { advanceGeneration, insertChange } from './change.ts';
import { chargeQuota } from './charge.ts';
import { int, json, str } from './columns.ts';
import type { Db, Queryable } from './db.ts';
import { insertMovement } from './movements.ts';
import { FENCE } from './fence.ts';
import { dedupeKey, enqueue } from './outbox.ts';
import { shortfalls, type TenantQuota } from './queue-pick.ts';
import { lockQuota } from './queue.ts';
import { ensureRoom, GROW_MODES, reserveRoom, roomOfRow, unitsRoomFits, type Placer, type Room } from './placement.ts';

export interface AutoscaleChangeInput {
  tenant: string;
  id: string;
  /** The controller's epoch (its fence). */
  epoch: number;
  /** The replicas the autoscaler decided (clamped to the stored spec's min..max here). */
  want: number;
  now: Date;
}

export type AutoscaleChangeResult =
  /** Committed: generation `generation` goes from → to; `short` is what a partial grant left out (empty: all granted); `cluster`: its cluster's room bounded the grant. */
  | { outcome: 'changed'; from: number; to: number; generation: number; short: Shortfall[]; cluster: string | null }
  /** Nothing could be charged: short of these quota (or admissions are queued), or (`cluster`) of room on its cluster. Nothing written. */
  | { outcome: 'quota-limited'; from: number; short: Shortfall[]; queued: number; cluster: string | null }
  /** Nothing to do now: not running, a change still in flight, not autoscaled, already there, or fenced out. */
  | { outcome: 'skipped'; reason: 'not-active' | 'change-pending' | 'not-autoscaled' | 'unchanged' | 'fenced' };

class Skip extends Error {
  readonly result: AutoscaleChangeResult;
  constructor(result: AutoscaleChangeResult) {
    super('autoscale change not committed');
    this.result = result;
  }
}

/**
 * One autoscaler change. When its cluster's room bounded a scale-up the quota allowed, more room is
 * borrowed for it afterwards (ledger/placement.ts ensureRoom: outside any transaction of the tenant),
 * and a scale-up that got nothing is tried once more; a partial one takes the rest at a later tick.
 */
export async function autoscaleChange(db: Db, input: AutoscaleChangeInput, placer: Placer): Promise<AutoscaleChangeResult> {
  let roomShort: RoomShort | undefined;
  const attempt = async (): Promise<AutoscaleChangeResult> => {
    try {
      return await db.transaction((tx) => changeOnce(tx, input, (s) => (roomShort = s)));
    } catch (err) {
      if (err instanceof Skip) return err.result; // rolled back: nothing was written
      throw err;
    }
  };
  const first = await attempt();
  if (!roomShort) return first;
  await ensureRoom(placer, db, roomShort.room, { one: roomShort.one, units: roomShort.units, partial: true }, `autoscaler:${input.id}`);
  return first.outcome === 'quota-limited' ? attempt() : first;
}

/** A scale-up the quota allowed but its cluster's room did not: the room and the whole scale-up's amounts. */
interface RoomShort {
  room: Room;
  /** One replica's amounts, and the replicas the quota allowed. */
  one: Amounts;
  units: number;
}

async function changeOnce(tx: Queryable, input: AutoscaleChangeInput, onRoomShort: (s: RoomShort) => void): Promise<AutoscaleChangeResult> {
  const { tenant, id, now } = input;
  const row = (
    await tx.execute('SELECT state, spec, generation, settled_generation, cluster, room_anchor FROM reservation WHERE tenant = ? AND id = ? FOR UPDATE', [tenant, id])
  ).rows[0];
  if (!row || !(ACTIVE_STATES as readonly string[]).includes(str(row.state))) return { outcome: 'skipped', reason: 'not-active' };
  const generation = int(row.generation);
  if (int(row.settled_generation) < generation) return { outcome: 'skipped', reason: 'change-pending' };
  const spec = json(row.spec) as ModelServiceSpec;
  if (!spec.autoscale) return { outcome: 'skipped', reason: 'not-autoscaled' };
  const from = spec.replicas;
  const want = clampReplicas(spec.autoscale, input.want);
  if (want === from) return { outcome: 'skipped', reason: 'unchanged' };

  let to = want;
  let short: Shortfall[] = [];
  let clusterBound: string | null = null;
  const room = roomOfRow(row);
  if (want > from) {
    const locked = await lockQuota(tx, tenant);
    to = from + affordableReplicas(spec, locked.quota, want - from, locked.queued);
    short = to < want ? shortfalls(scaleDelta(spec, from, want), locked.quota) : [];
    if (to === from) return { outcome: 'quota-limited', from, short, queued: locked.queued, cluster: null };
    // The cluster's room bounds it too (read under its lock, last: the reserve below cannot be refused).
    const fits = room ? await unitsRoomFits(tx, room, scaleDelta(spec, 0, 1)) : Number.MAX_SAFE_INTEGER;
    if (room && fits < to - from) {
      onRoomShort({ room, one: scaleDelta(spec, 0, 1), units: to - from });
      to = from + fits;
      clusterBound = room.cluster;
      if (to === from) return { outcome: 'quota-limited', from, short: [], queued: 0, cluster: room.cluster };
    }
  }
  const charge = to > from ? scaleDelta(spec, from, to) : NO_AMOUNTS;
  if (!(await advanceGeneration(tx, { tenant, id, from: generation, spec: { ...spec, replicas: to }, charge, now, epoch: input.epoch }))) {
    throw new Skip({ outcome: 'skipped', reason: 'fenced' }); // it was read under its row lock: only the fence can refuse it
  }
  const next = generation + 1;
  const requestId = `autoscale:${id}:${next}`;
  await insertChange(tx, {
    tenant,
    reservationId: id,
    generation: next,
    idempotencyKey: autoscalerKey(id, next),
    requestHash: AUTOSCALER_HASH,
    fromReplicas: from,
    toReplicas: to,
    requestId,
    now,
  });
  await enqueue(tx, [{ tenant, reservationId: id, kind: 'scale', dedupeKey: dedupeKey.scale(id, next), requestId, cluster: str(row.cluster) }], now);
  if (to > from) {
    await insertMovement(tx, { reservationId: id, tenant, generation: next, direction: 'charge', amounts: charge, now });
    // Under the quota-row locks the grant fits: a refusal here is a bug, never a partial write.
    if (!(await chargeQuota(tx, tenant, charge, now))) throw new Error(`autoscale: the charge of ${to - from} replicas was refused under the quota lock`);
    if (room && !(await reserveRoom(tx, room, charge, GROW_MODES, now))) throw new Error(`autoscale: the room of ${to - from} replicas was refused under the allotment's lock`);
  }
  return { outcome: 'changed', from, to, generation: next, short, cluster: clusterBound };
}

/** How many more replicas (at most `wanted`) the tenant's quota has room for; none while admissions are queued. PURE. */
function affordableReplicas(spec: Pick<ModelServiceSpec, 'resources'>, quota: TenantQuota, wanted: number, queued: number): number {
  if (queued > 0 || wanted <= 0) return 0;
  const one = scaleDelta(spec, 0, 1);
  let fit = wanted;
  for (const r of REPLICA_RESOURCES) {
    if (one[r] <= 0) continue;
    const q = quota[r];
    const room = q ? Math.max(0, q.hard - q.used) : 0;
    fit = Math.min(fit, Math.floor(room / one[r]));
  }
  return fit;
}

/**
 * The Idempotency-Key of the autoscaler's change row: with spaces, which a tenant's key can never
 * hold (schema/admission.ts idempotencyKey), so no PATCH can take the key of a later autoscaler change.
 */
const autoscalerKey = (id: string, generation: number): string => `autoscaler ${id} ${generation}`;

/** The request_hash of the autoscaler's change rows: their keys are never replayed. */
const AUTOSCALER_HASH = '0'.repeat(64);

/**
 * Writes what the autoscaler decided for the tenant to see (reservation.autoscale_status; its only
 * writer). Fenced like every controller write; only while the admission runs. True when written.
 */
export async function writeAutoscaleStatus(q: Queryable, a: { tenant: string; id: string; epoch: number; status: AutoscaleStatus }): Promise<boolean> {
  const r = await q.execute(`UPDATE reservation r ${FENCE('r')} SET r.autoscale_status = ? WHERE r.tenant = ? AND r.id = ? AND r.state IN (?)`, [
    a.epoch,
    JSON.stringify(a.status),
    a.tenant,
    a.id,
    [...ACTIVE_STATES],
  ]);
  return r.rowsAffected === 1;
}

/** What the autoscaler last wrote for the admission (null: nothing, or unreadable): a new leader's starting point. */
export async function readAutoscaleStatus(q: Queryable, tenant: string, id: string): Promise<AutoscaleStatus | null> {
  const row = (await q.execute('SELECT autoscale_status FROM reservation WHERE tenant = ? AND id = ?', [tenant, id])).rows[0];
  return autoscaleStatusOf(row?.autoscale_status);
}

/** The autoscale_status column as written (an unreadable one reads as none). */
export function autoscaleStatusOf(v: unknown): AutoscaleStatus | null {
  if (v === null || v === undefined) return null;
  const parsed = autoscaleStatusSchema.safeParse(json(v));
  return parsed.success ? parsed.data : null;
}
