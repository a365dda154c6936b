// Ledger rows for the controller-side suites: an admission charged exactly as the Worker
// charges it (reservation + charge movement + quota, one transaction), then put in the state a
// test needs, optionally with the binding the deliverer would have written.
import { ulid } from 'ulid';
import { expect } from 'vitest';
import type { Db } from '../../ledger/db.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { claimDue, type ClaimedRow, type ClaimOptions } from '../../controller/reservation/outbox-store.ts';
import { chargeQuota } from '../../ledger/charge.ts';
import { insertReservation } from '../../functions/db/reservations.ts';
import { crNameFor, type ReservationState } from '../../schema/admission.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { insertMovement } from '../../ledger/movements.ts';

export const FIXTURE_AMOUNTS: Amounts = { cpu: 1500, memory: 2048, 'nvidia.com/gpu': 1, modelservices: 1 };
/** The stored spec of a fixture admission (what FIXTURE_AMOUNTS charges). */
export const FIXTURE_SPEC = { image: 'x/y:1', replicas: 1, port: 8000, resources: { cpu: '1500m', memory: '2Gi', 'nvidia.com/gpu': '1' }, env: [], args: [], readinessPath: '/healthz' };

export interface FixtureOptions {
  /** Its id (default: a new ULID). */
  id?: string;
  tenant?: string;
  state?: ReservationState;
  /** A binding row as ackCreate writes it (namespace, cr name md-<id>, uid). */
  binding?: { namespace: string; uid: string; everReady?: boolean };
  now?: Date;
}

/** Inserts one charged admission (the tenant's quota must allow it) and returns its id (a ULID). */
export async function insertAdmission(db: Db, o: FixtureOptions = {}): Promise<string> {
  const id = o.id ?? ulid();
  const tenant = o.tenant ?? 'acme';
  const now = o.now ?? new Date();
  await db.transaction(async (tx) => {
    expect(await chargeQuota(tx, tenant, FIXTURE_AMOUNTS, now)).toBe(true);
    await insertReservation(tx, {
      id,
      tenant,
      idempotencyKey: id,
      requestHash: 'h'.repeat(64),
      name: 'm',
      spec: FIXTURE_SPEC,
      amounts: FIXTURE_AMOUNTS,
      requestId: `req-${id}`,
      now,
    });
    await insertMovement(tx, { reservationId: id, tenant, generation: 1, direction: 'charge', amounts: FIXTURE_AMOUNTS, now });
    if (o.binding) {
      await tx.execute(
        `INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, ever_ready, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [tenant, id, o.binding.namespace, crNameFor(id), o.binding.uid, o.binding.everReady ? 1 : 0, now, now],
      );
    }
    if (o.state && o.state !== 'admitted') await tx.execute('UPDATE reservation SET state = ? WHERE tenant = ? AND id = ?', [o.state, tenant, id]);
  });
  return id;
}

/** claimDue on every shard of the ledger, as the poller does (one shard on MariaDB). */
export async function claimEverywhere(db: Db, o: ClaimOptions): Promise<ClaimedRow[]> {
  const out: ClaimedRow[] = [];
  for (const shard of await ledgerShards(db)) out.push(...(await claimDue(shard.db, { ...o, shard: shard.name })));
  return out;
}
