// Autoscaling through the ledger, at service level against the real ledger (MariaDB through
// ps-http-sim, and the 2-shard Vitess keyspace in the `vitess` project): the tenant sets and
// changes the spec (POST, PATCH; a manual replicas change is refused while it autoscales), and the
// controller's autoscaler changes replicas in ONE transaction like a PATCH — a scale-up charged
// before anything else happens, granted as far as the quota allows, nothing while admissions are
// queued, nothing for a deposed leader; a scale-down refunded only by the refund path. checkLedger
// after each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionOf } from '../support/policy.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { rejection } from '../support/rejection.ts';
import { admit } from '../../functions/services/admit.ts';
import { getAdmission } from '../../functions/services/requests.ts';
import { getQuota } from '../../functions/services/quota.ts';
import { scaleAdmission } from '../../functions/services/scale.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { recordScaleApplied, transition } from '../../controller/reservation/transitions.ts';
import { refundScaleDown } from '../../controller/reservation/quota-moves.ts';
import { autoscaleChange, writeAutoscaleStatus } from '../../ledger/autoscale-change.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import type { Amounts } from '../../schema/model-service.ts';
import type { AutoscaleStatus } from '../../schema/autoscale.ts';
import { createPlacer } from '../../ledger/placement.ts';

let L: LedgerDatabase;
let epoch: number;
const TENANTS = ['as-spec', 'as-up', 'as-part', 'as-queue', 'as-down', 'as-fence'];
beforeAll(async () => {
  L = await createLedgerDatabase();
  // cpu 2000m = 4 replicas of 500m: room for +3 over an admission of 1.
  for (const t of TENANTS) await L.setQuota(t, 'cpu=2', 'memory=4Gi', 'modelservices=10');
  epoch = await acquireEpoch(L.db, 'default', 'autoscale-test', new Date());
});
afterAll(async () => L?.drop());

let seq = 0;
const AUTOSCALE = { minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 };
async function admitted(tenant: string, replicas = 1, autoscale: Record<string, unknown> | undefined = AUTOSCALE): Promise<string> {
  const parsed = admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas, resources: { cpu: '500m', memory: '512Mi' }, ...(autoscale ? { autoscale } : {}) });
  const { admission } = await admit(L.deps(), { tenant, idempotencyKey: `adm-${++seq}`, requestId: `r-${seq}`, parsed });
  await transition(L.db, { tenant, id: admission.id }, ['admitted'], 'delivered', epoch, new Date(), null);
  return admission.id;
}
const reservedCpu = async (tenant: string) => (await getQuota(L.deps(), tenant)).resources.cpu.reserved;
const moves = (id: string) =>
  L.db
    .execute('SELECT generation, direction, cpu_millis FROM quota_movement WHERE reservation_id = ? ORDER BY generation, direction', [id])
    .then((r) => r.rows.map((m) => `${Number(m.generation)}:${String(m.direction)}:${Number(m.cpu_millis)}`));
const scaleRows = (tenant: string, id: string) => L.count("SELECT COUNT(*) FROM outbox WHERE tenant = ? AND reservation_id = ? AND kind = 'scale'", [tenant, id]);
const clean = async () => expect(await checkLedger(L.db, null, 'ns', { settled: false })).toEqual([]);
const cpu = (replicas: number): Amounts => ({ cpu: 500 * replicas, memory: 512 * replicas, 'nvidia.com/gpu': 0, modelservices: 0 });
const change = (tenant: string, id: string, want: number, e = epoch) => autoscaleChange(L.db, { tenant, id, epoch: e, want, now: new Date() }, createPlacer());
const settle = (tenant: string, id: string, generation: number) => recordScaleApplied(L.db, { tenant, id }, generation, true, epoch, new Date());

describe('the autoscale spec', () => {
  it('is stored with the admission, refuses a manual change of replicas, and PATCH changes or clears it', async () => {
    const id = await admitted('as-spec', 2);
    const a = await getAdmission(L.deps(), 'as-spec', id);
    expect(a.spec.autoscale).toMatchObject({ ...AUTOSCALE, stableWindowSeconds: 60, tolerance: 0.1, metricsFallback: null });
    expect(a.autoscaleStatus).toBeNull();

    const refused = await rejection(scaleAdmission(L.deps(), { tenant: 'as-spec', id, idempotencyKey: 'k1', requestId: 'r', replicas: 3 }));
    expect([refused.status, refused.code]).toEqual([409, 'autoscaled']);

    // A new range above the replicas moves them into it in the same change: charged at once.
    const narrowed = await scaleAdmission(L.deps(), { tenant: 'as-spec', id, idempotencyKey: 'k2', requestId: 'r', autoscale: { ...a.spec.autoscale!, minReplicas: 3, maxReplicas: 4 } });
    expect(narrowed.outcome).toBe('accepted');
    expect(narrowed.admission).toMatchObject({ replicas: 3, chargedReplicas: 3, spec: { autoscale: { minReplicas: 3, maxReplicas: 4 } } });
    expect(await reservedCpu('as-spec')).toBe(1500);
    expect(await settle('as-spec', id, 2)).toBe(true);
    // The same spec again changes nothing; null stops autoscaling and keeps the replicas.
    expect((await scaleAdmission(L.deps(), { tenant: 'as-spec', id, idempotencyKey: 'k3', requestId: 'r', autoscale: narrowed.admission.spec.autoscale! })).outcome).toBe('unchanged');
    const off = await scaleAdmission(L.deps(), { tenant: 'as-spec', id, idempotencyKey: 'k4', requestId: 'r', autoscale: null });
    expect(off.admission.spec.autoscale).toBeUndefined();
    expect(off.admission.replicas).toBe(3);
    expect(await settle('as-spec', id, 3)).toBe(true);
    // Not autoscaled any more: replicas are the tenant's again, and the autoscaler leaves it alone.
    expect((await scaleAdmission(L.deps(), { tenant: 'as-spec', id, idempotencyKey: 'k5', requestId: 'r', replicas: 2 })).outcome).toBe('accepted');
    expect(await change('as-spec', id, 4)).toEqual({ outcome: 'skipped', reason: 'change-pending' });
    await clean();
  });
});

describe("the autoscaler's change", () => {
  it('charges a scale-up in the same transaction as its generation and scale row, before anything else', async () => {
    const id = await admitted('as-up');
    expect(await change('as-up', id, 3)).toEqual({ outcome: 'changed', from: 1, to: 3, generation: 2, short: [], cluster: null });
    expect(await moves(id)).toEqual(['1:charge:500', '2:charge:1000']);
    expect(await reservedCpu('as-up')).toBe(1500);
    expect(await scaleRows('as-up', id)).toBe(1);
    expect(await getAdmission(L.deps(), 'as-up', id)).toMatchObject({ replicas: 3, chargedReplicas: 3, pendingChange: { fromReplicas: 1, toReplicas: 3, phase: 'applying' } });
    // One change at a time: the next waits until this one is settled.
    expect(await change('as-up', id, 4)).toEqual({ outcome: 'skipped', reason: 'change-pending' });
    expect(await settle('as-up', id, 2)).toBe(true);
    // Already there, and beyond the range clamps to it.
    expect(await change('as-up', id, 3)).toEqual({ outcome: 'skipped', reason: 'unchanged' });
    expect(await change('as-up', id, 99)).toMatchObject({ outcome: 'changed', from: 3, to: 4 });
    await clean();
  });

  it('grants a scale-up as far as the quota allows and reports the shortfall; nothing when none fits', async () => {
    const id = await admitted('as-part');
    const res = await change('as-part', id, 6);
    expect(res).toEqual({
      outcome: 'changed',
      from: 1,
      to: 4,
      generation: 2,
      short: [{ resource: 'cpu', requested: 2500, available: 1500, short: 1000 }],
      cluster: null,
    });
    expect(await reservedCpu('as-part')).toBe(2000);
    expect(await settle('as-part', id, 2)).toBe(true);
    const before = await L.fingerprint();
    expect(await change('as-part', id, 6)).toEqual({ outcome: 'quota-limited', from: 4, short: [{ resource: 'cpu', requested: 1000, available: 0, short: 1000 }], queued: 0, cluster: null });
    expect(await L.fingerprint()).toBe(before);
    await clean();
  });

  it('grants nothing while the tenant has admissions queued (nothing passes a waiting queue)', async () => {
    const id = await admitted('as-queue');
    // Fill the quota with a plain admission, then queue one behind it.
    await admit(L.deps(), { tenant: 'as-queue', idempotencyKey: 'fill', requestId: 'r', parsed: admissionOf({ name: 'fill', image: 'ghcr.io/acme/llm:1.0', replicas: 2, resources: { cpu: '500m', memory: '512Mi' } }) });
    const queued = await admit(L.deps(), {
      tenant: 'as-queue',
      idempotencyKey: 'q',
      requestId: 'r',
      parsed: admissionOf({ name: 'big', image: 'ghcr.io/acme/llm:1.0', replicas: 2, resources: { cpu: '500m', memory: '512Mi' }, onShortQuota: 'queue' }),
    });
    expect(queued.admission.state).toBe('queued');
    const before = await L.fingerprint();
    expect(await change('as-queue', id, 2)).toMatchObject({ outcome: 'quota-limited', from: 1, queued: 1 });
    expect(await L.fingerprint()).toBe(before);
    await clean();
  });

  it('lowers replicas without a refund; the refund comes only through the refund path, once', async () => {
    const id = await admitted('as-down', 4);
    expect(await change('as-down', id, 2)).toEqual({ outcome: 'changed', from: 4, to: 2, generation: 2, short: [], cluster: null });
    expect(await moves(id)).toEqual(['1:charge:2000']);
    expect(await reservedCpu('as-down')).toBe(2000);
    expect(await getAdmission(L.deps(), 'as-down', id)).toMatchObject({ replicas: 2, chargedReplicas: 4 });
    expect(await recordScaleApplied(L.db, { tenant: 'as-down', id }, 2, false, epoch, new Date())).toBe(true);
    expect(await refundScaleDown(L.db, { tenant: 'as-down', id }, 2, cpu(2), epoch, new Date(), null)).toBe(true);
    expect(await refundScaleDown(L.db, { tenant: 'as-down', id }, 2, cpu(2), epoch, new Date(), null)).toBe(false);
    expect(await reservedCpu('as-down')).toBe(1000);
    expect(await moves(id)).toEqual(['1:charge:2000', '2:refund:1000']);
    await clean();
  });

  it("a deposed leader's change and status write change nothing", async () => {
    const id = await admitted('as-fence');
    const before = await L.fingerprint();
    expect(await change('as-fence', id, 3, epoch - 1)).toEqual({ outcome: 'skipped', reason: 'fenced' });
    const status: AutoscaleStatus = { desiredReplicas: 3, readyReplicas: 1, load: 25, panic: false, lastDecision: null, conditions: [], observedAt: new Date().toISOString() };
    expect(await writeAutoscaleStatus(L.db, { tenant: 'as-fence', id, epoch: epoch - 1, status })).toBe(false);
    expect(await L.fingerprint()).toBe(before);
    // The leader's status write is what the tenant reads.
    expect(await writeAutoscaleStatus(L.db, { tenant: 'as-fence', id, epoch, status })).toBe(true);
    expect((await getAdmission(L.deps(), 'as-fence', id)).autoscaleStatus).toEqual(status);
    await clean();
  });
});
