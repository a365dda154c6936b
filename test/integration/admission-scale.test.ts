// PATCH /requests/:id at service level against the real ledger (MariaDB through ps-http-sim, and
// the 2-shard Vitess keyspace in the `vitess` project), with the controller's fenced store calls
// standing in for the controller: an increase is charged all or nothing and exactly once, a
// decrease only refunded by the controller (once), idempotency per admission, one change at a
// time, DELETE winning over a pending change, a lost COMMIT reply; checkLedger after each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionOf } from '../support/policy.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { rejection } from '../support/rejection.ts';
import type { DbFetch } from '../../ledger/db.ts';
import { admit } from '../../functions/services/admit.ts';
import { deleteAdmission, getAdmission } from '../../functions/services/requests.ts';
import { getQuota } from '../../functions/services/quota.ts';
import { scaleAdmission, type ScaleInput } from '../../functions/services/scale.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { recordScaleApplied, transition } from '../../controller/reservation/transitions.ts';
import { refundScaleDown, release } from '../../controller/reservation/quota-moves.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import type { Amounts } from '../../schema/model-service.ts';

let L: LedgerDatabase;
let epoch: number;
const TENANTS = ['sc-up', 'sc-short', 'sc-down', 'sc-race', 'sc-fold', 'sc-lost', 'sc-other', 'sc-noop'];
beforeAll(async () => {
  L = await createLedgerDatabase();
  for (const t of TENANTS) await L.setQuota(t, 'cpu=4', 'memory=4Gi', 'modelservices=10');
  epoch = await acquireEpoch(L.db, 'default', 'scale-test', new Date());
});
afterAll(async () => L?.drop());

let seq = 0;
async function admitted(tenant: string, replicas: number): Promise<string> {
  const parsed = admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas, resources: { cpu: '500m', memory: '512Mi' } });
  const { admission } = await admit(L.deps(), { tenant, idempotencyKey: `adm-${++seq}`, requestId: `r-${seq}`, parsed });
  return admission.id;
}
const scale = (tenant: string, id: string, replicas: number, key = `sc-${++seq}`, fetch?: DbFetch) =>
  scaleAdmission(L.deps(fetch ? { fetch } : {}), { tenant, id, idempotencyKey: key, requestId: `r-${key}`, replicas } satisfies ScaleInput);
const reserved = async (tenant: string) => {
  const q = (await getQuota(L.deps(), tenant)).resources;
  return { cpu: q.cpu.reserved, memory: q.memory.reserved, modelservices: q.modelservices.reserved };
};
const moves = (id: string) =>
  L.db
    .execute('SELECT generation, direction, cpu_millis FROM quota_movement WHERE reservation_id = ? ORDER BY generation, direction', [id])
    .then((r) => r.rows.map((m) => `${Number(m.generation)}:${String(m.direction)}:${Number(m.cpu_millis)}`));
const clean = async () => expect(await checkLedger(L.db, null, 'ns', { settled: false })).toEqual([]);
const delta = (replicas: number): Amounts => ({ cpu: 500 * replicas, memory: 512 * replicas, 'nvidia.com/gpu': 0, modelservices: 0 });

describe('PATCH replicas: an increase', () => {
  it('is charged its delta at once, exactly once, and pending until the controller applies it', async () => {
    const id = await admitted('sc-up', 2);
    const res = await scale('sc-up', id, 4, 'up-1');
    expect(res.outcome).toBe('accepted');
    expect(res.admission).toMatchObject({ replicas: 4, chargedReplicas: 4, generation: 2, spec: { replicas: 4 }, amounts: { cpu: 2000, memory: 2048, modelservices: 1 } });
    expect(res.admission.pendingChange).toMatchObject({ generation: 2, fromReplicas: 2, toReplicas: 4, phase: 'applying' });
    // The answer is built from the read and what the transaction wrote: exactly what a read says now.
    expect(res.admission).toEqual(await getAdmission(L.deps(), 'sc-up', id));
    expect(await reserved('sc-up')).toEqual({ cpu: 2000, memory: 2048, modelservices: 1 });
    expect(await moves(id)).toEqual(['1:charge:1000', '2:charge:1000']);
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE tenant = 'sc-up' AND reservation_id = ? AND kind = 'scale'", [id])).toBe(1);
    await clean();

    // A retry with the same key changes nothing again; the same key with another body is refused.
    const replay = await scale('sc-up', id, 4, 'up-1');
    expect(replay.outcome).toBe('replayed');
    expect((await rejection(scale('sc-up', id, 3, 'up-1'))).status).toBe(422);
    // One change at a time.
    const pending = await rejection(scale('sc-up', id, 3));
    expect([pending.status, pending.code]).toEqual([409, 'change_pending']);
    expect(await moves(id)).toEqual(['1:charge:1000', '2:charge:1000']);

    // The controller applied it (the CR carries 4 replicas): settled, nothing more charged.
    expect(await recordScaleApplied(L.db, { tenant: 'sc-up', id }, 2, true, epoch, new Date())).toBe(true);
    expect(await recordScaleApplied(L.db, { tenant: 'sc-up', id }, 2, true, epoch, new Date())).toBe(false);
    const after = await getAdmission(L.deps(), 'sc-up', id);
    expect(after).toMatchObject({ pendingChange: null, replicas: 4, chargedReplicas: 4 });
    expect(await reserved('sc-up')).toEqual({ cpu: 2000, memory: 2048, modelservices: 1 });
    // The same replicas again is no change at all.
    expect((await scale('sc-up', id, 4)).outcome).toBe('unchanged');
    expect((await getAdmission(L.deps(), 'sc-up', id)).generation).toBe(2);
    await clean();
  });

  it('beyond the quota is 409 quota_exceeded with the shortfall, and nothing changes', async () => {
    const id = await admitted('sc-short', 2);
    const before = await L.fingerprint();
    const err = await rejection(scale('sc-short', id, 9));
    expect([err.status, err.code]).toEqual([409, 'quota_exceeded']);
    expect(err.details).toEqual({
      shortfalls: [
        { resource: 'cpu', requested: 3500, available: 3000, short: 500 },
        { resource: 'memory', requested: 3584, available: 3072, short: 512 },
      ],
    });
    expect(await L.fingerprint()).toBe(before);
    // Exactly the quota is fine.
    expect((await scale('sc-short', id, 8)).admission.chargedReplicas).toBe(8);
    expect(await reserved('sc-short')).toEqual({ cpu: 4000, memory: 4096, modelservices: 1 });
    await clean();
  });
});

describe('PATCH replicas: to the replicas it already has', () => {
  it('changes nothing but binds its Idempotency-Key: the same key and body replay, the same key with another body is 422', async () => {
    const id = await admitted('sc-noop', 1);
    const changes = () =>
      L.db
        .execute("SELECT generation, idempotency_key, from_replicas, to_replicas FROM reservation_change WHERE tenant = 'sc-noop' AND reservation_id = ? ORDER BY generation, idempotency_key", [id])
        .then((r) => r.rows.map((c) => `${Number(c.generation)}:${String(c.idempotency_key)}:${Number(c.from_replicas)}→${Number(c.to_replicas)}`));
    const first = await scale('sc-noop', id, 1, 'K');
    expect(first.outcome).toBe('unchanged');
    expect(first.admission).toEqual(await getAdmission(L.deps(), 'sc-noop', id));
    expect(first.admission).toMatchObject({ generation: 1, replicas: 1, pendingChange: null });
    // Its one row: the key, at generation 0, from 1 to 1. Nothing charged, nothing enqueued.
    expect(await changes()).toEqual(['0:K:1→1']);
    expect(await moves(id)).toEqual(['1:charge:500']);
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE tenant = 'sc-noop' AND kind = 'scale'")).toBe(0);
    await clean();

    const before = await L.fingerprint();
    const replay = await scale('sc-noop', id, 1, 'K');
    expect([replay.outcome, replay.admission]).toEqual(['replayed', first.admission]);
    const reused = await rejection(scale('sc-noop', id, 3, 'K'));
    expect([reused.status, reused.code]).toEqual([422, 'idempotency_key_reused']);
    expect(await L.fingerprint()).toBe(before);

    // Another key makes the change; the no-op's row is never taken for the admission's change.
    const up = await scale('sc-noop', id, 3, 'K2');
    expect(up.outcome).toBe('accepted');
    expect(up.admission).toMatchObject({ generation: 2, replicas: 3, pendingChange: { generation: 2, fromReplicas: 1, toReplicas: 3 } });
    expect(up.admission).toEqual(await getAdmission(L.deps(), 'sc-noop', id));
    expect(await changes()).toEqual(['0:K:1→1', '2:K2:1→3']);
    // K still means "1 replica": replayed as it is now, and never a second change.
    expect((await scale('sc-noop', id, 1, 'K')).outcome).toBe('replayed');
    expect((await rejection(scale('sc-noop', id, 3, 'K'))).status).toBe(422);
    expect(await moves(id)).toEqual(['1:charge:500', '2:charge:1000']);
    await clean();
  });
});

describe('PATCH replicas: a decrease', () => {
  it('keeps its charge until the controller refunds it, once', async () => {
    const id = await admitted('sc-down', 4);
    await transition(L.db, { tenant: 'sc-down', id }, ['admitted'], 'delivered', epoch, new Date(), null);
    const res = await scale('sc-down', id, 1);
    expect(res.outcome).toBe('accepted');
    expect(res.admission).toMatchObject({ replicas: 1, chargedReplicas: 4, amounts: { cpu: 2000 }, pendingChange: { phase: 'applying', fromReplicas: 4, toReplicas: 1 } });
    expect(res.admission).toEqual(await getAdmission(L.deps(), 'sc-down', id));
    expect(await reserved('sc-down')).toEqual({ cpu: 2000, memory: 2048, modelservices: 1 });
    expect(await moves(id)).toEqual(['1:charge:2000']);

    const at = { tenant: 'sc-down', id };
    expect(await recordScaleApplied(L.db, at, 2, false, epoch, new Date())).toBe(true);
    expect((await getAdmission(L.deps(), 'sc-down', id)).pendingChange).toMatchObject({ phase: 'awaitingScaleDown' });
    expect(await reserved('sc-down')).toEqual({ cpu: 2000, memory: 2048, modelservices: 1 });
    // A deposed leader's refund matches no fence row: nothing changes.
    const stale = await refundScaleDown(L.db, at, 2, delta(3), epoch - 1, new Date(), null);
    expect(stale).toBe(false);
    expect(await refundScaleDown(L.db, at, 2, delta(3), epoch, new Date(), null)).toBe(true);
    expect(await refundScaleDown(L.db, at, 2, delta(3), epoch, new Date(), null)).toBe(false);
    expect(await reserved('sc-down')).toEqual({ cpu: 500, memory: 512, modelservices: 1 });
    expect(await getAdmission(L.deps(), 'sc-down', id)).toMatchObject({ pendingChange: null, chargedReplicas: 1, amounts: { cpu: 500, memory: 512 } });
    expect(await moves(id)).toEqual(['1:charge:2000', '2:refund:1500']);
    await clean();
  });
});

describe('PATCH racing DELETE: DELETE wins', () => {
  it('a pending increase is given back with the release; a PATCH after the DELETE is refused', async () => {
    const id = await admitted('sc-race', 1);
    await scale('sc-race', id, 3);
    await deleteAdmission(L.deps(), 'sc-race', id, 'r-del');
    const err = await rejection(scale('sc-race', id, 2));
    expect([err.status, err.code]).toEqual([409, 'conflict']);
    const a = await getAdmission(L.deps(), 'sc-race', id);
    expect(a).toMatchObject({ state: 'deleting', pendingChange: null, chargedReplicas: 3 });
    // The controller's late apply of the superseded change settles nothing of the money.
    await transition(L.db, { tenant: 'sc-race', id }, ['deleting'], 'releasing', epoch, new Date(), null);
    expect(await release(L.db, { tenant: 'sc-race', id }, epoch, new Date())).toBe(true);
    expect(await moves(id)).toEqual(['1:charge:500', '2:charge:1000', '2:release:1500']);
    expect(await reserved('sc-race')).toEqual({ cpu: 0, memory: 0, modelservices: 0 });
    expect((await getAdmission(L.deps(), 'sc-race', id)).chargedReplicas).toBe(0);
    await clean();
  });

  it('a pending decrease folds into the release: never refunded on its own', async () => {
    const id = await admitted('sc-fold', 4);
    await transition(L.db, { tenant: 'sc-fold', id }, ['admitted'], 'ready', epoch, new Date(), null);
    await scale('sc-fold', id, 1);
    await recordScaleApplied(L.db, { tenant: 'sc-fold', id }, 2, false, epoch, new Date());
    await deleteAdmission(L.deps(), 'sc-fold', id, 'r-del');
    expect(await refundScaleDown(L.db, { tenant: 'sc-fold', id }, 2, delta(3), epoch, new Date(), null)).toBe(false);
    await transition(L.db, { tenant: 'sc-fold', id }, ['deleting'], 'releasing', epoch, new Date(), null);
    expect(await release(L.db, { tenant: 'sc-fold', id }, epoch, new Date())).toBe(true);
    expect(await moves(id)).toEqual(['1:charge:2000', '2:release:2000']);
    expect(await reserved('sc-fold')).toEqual({ cpu: 0, memory: 0, modelservices: 0 });
    await clean();
  });
});

describe('PATCH replicas: faults and strangers', () => {
  it('a lost COMMIT reply, then a retry with the same key → one change, one charge', async () => {
    const id = await admitted('sc-lost', 1);
    const lost: DbFetch = async (url, init) => {
      const res = await fetch(url, init);
      if ((JSON.parse(init?.body ?? '{}') as { query?: string }).query === 'COMMIT') throw new TypeError('fetch failed: connection reset (injected after COMMIT)');
      return res;
    };
    expect((await rejection(scale('sc-lost', id, 2, 'lost-1', lost))).status).toBe(503);
    await clean(); // the money holds at the instant of the lost reply
    expect((await scale('sc-lost', id, 2, 'lost-1')).outcome).toBe('replayed');
    expect(await moves(id)).toEqual(['1:charge:500', '2:charge:500']);
    expect(await L.count("SELECT COUNT(*) FROM reservation_change WHERE tenant = 'sc-lost'")).toBe(1);
    expect(await reserved('sc-lost')).toEqual({ cpu: 1000, memory: 1024, modelservices: 1 });
    await clean();
  });

  it("another tenant's admission is not found, and stays as it was", async () => {
    const id = await admitted('sc-other', 1);
    const before = await L.fingerprint();
    const err = await rejection(scale('sc-up', id, 2));
    expect([err.status, err.code]).toEqual([404, 'not_found']);
    expect(await L.fingerprint()).toBe(before);
  });
});
