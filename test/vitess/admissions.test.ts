// The acceptance test of the sharded ledger: 100 concurrent admissions across 20
// tenants, on the 2-shard Vitess ledger (transaction mode SINGLE), through the Worker's services
// and the production driver. Some tenants have room for fewer than they ask (all-or-nothing 409s),
// then the controller's side takes over, delivers, and releases a part of them. Every money
// invariant holds on both shards at the end (checkLedger, shard by shard), and each tenant's usage
// is exactly what its admissions hold.
import { describe, expect, it } from 'vitest';
import { str } from '../../ledger/columns.ts';
import { admit } from '../../functions/services/admit.ts';
import { ulidGenerator, type ServiceDeps } from '../../functions/services/deps.ts';
import { deleteAdmission } from '../../functions/services/requests.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { ack } from '../../controller/reservation/outbox-store.ts';
import { acquireEpoch, ensureFence } from '../../controller/reservation/leader-epoch.ts';
import { ackCreate, transition } from '../../controller/reservation/transitions.ts';
import { release } from '../../controller/reservation/quota-moves.ts';
import { setTenantQuota } from '../../scripts/tenant.ts';
import { ApiError } from '../../functions/errors.ts';
import { admissionOf } from '../support/policy.ts';
import { claimEverywhere } from '../support/ledger-rows.ts';
import { vitessLedger } from '../support/vitess.ts';
import { createPlacer } from '../../ledger/placement.ts';

const V = vitessLedger();
const TENANTS = 20;
const ADMISSIONS = 100;

async function shardOf(tenant: string): Promise<string> {
  const r = await V.db.execute('VEXPLAIN QUERIES SELECT resource FROM tenant_quota WHERE tenant = ?', [tenant]);
  return str(r.rows[0]?.shard);
}

describe('100 concurrent admissions across 20 tenants on 2 shards', () => {
  it('keep every invariant, per shard and per tenant', async () => {
    const tenants = Array.from({ length: TENANTS }, () => V.tenant('acc'));
    // 5 admissions of 1 cpu per tenant; every 4th tenant has room for 3 only.
    for (const [i, t] of tenants.entries()) await setTenantQuota(V.db, t, { cpu: i % 4 === 0 ? 3000 : 8000, memory: 65536 });
    const shards = new Set(await Promise.all(tenants.map(shardOf)));
    expect(shards, 'the tenants live on both shards').toEqual(new Set(['-80', '80-']));

    const deps: ServiceDeps = { db: V.db, clock: () => new Date(), newId: ulidGenerator(), placer: createPlacer() };
    const parsed = admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '1', memory: '1Gi' } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: ADMISSIONS }, (_, n) => {
        const tenant = tenants[n % TENANTS]!;
        return admit(deps, { tenant, idempotencyKey: `k${n}`, requestId: `r${n}`, parsed });
      }),
    );
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused).toHaveLength((TENANTS / 4) * 2); // the small tenants' 2 of 5 each
    for (const r of refused) expect(r.reason instanceof ApiError && r.reason.status === 409, String(r.reason)).toBe(true);
    const admitted = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.admission] : []));
    expect(admitted).toHaveLength(ADMISSIONS - (TENANTS / 4) * 2); // the small tenants admit 3 of 5
    const mine = new Set(tenants);
    const drift = async () => (await checkLedger(V.db, null, 'ns', { settled: false })).filter((d) => d.tenant === undefined ? admitted.some((a) => a.id === d.reservation) : mine.has(d.tenant));
    expect(await drift()).toEqual([]);

    // The controller takes over, delivers every create row of these tenants, and the tenants
    // delete every other admission, which the controller then releases.
    const epoch = await acquireEpoch(V.db, 'default', 'ctl-acc', new Date());
    for (const t of tenants) await ensureFence(V.db, t, 'default', epoch, 'ctl-acc', new Date());
    const rows = (await claimEverywhere(V.db, { cluster: 'default', holder: 'ctl-acc', epoch, leaseMs: 600_000, limit: 1000, now: new Date() })).filter((r) => mine.has(r.tenant));
    expect(rows.filter((r) => r.kind === 'create')).toHaveLength(admitted.length);
    await Promise.all(rows.map((r) => ackCreate(V.db, r, { namespace: 'ns', name: `md-${r.reservationId.toLowerCase()}`, uid: `uid-${r.reservationId}` }, new Date())));
    const gone = admitted.filter((_, i) => i % 2 === 0);
    await Promise.all(gone.map((a) => deleteAdmission(deps, a.tenant, a.id, `del-${a.id}`)));
    const deletes = (await claimEverywhere(V.db, { cluster: 'default', holder: 'ctl-acc', epoch, leaseMs: 600_000, limit: 1000, now: new Date() })).filter((r) => mine.has(r.tenant));
    expect(deletes.filter((r) => r.kind === 'delete')).toHaveLength(gone.length);
    await Promise.all(
      deletes.map(async (r) => {
        const at = { tenant: r.tenant, id: r.reservationId };
        expect(await transition(V.db, at, ['deleting'], 'releasing', epoch, new Date(), null)).toBe(true);
        expect(await release(V.db, at, epoch, new Date())).toBe(true);
        expect(await ack(V.db, r, new Date())).toBe(true);
      }),
    );
    expect(await drift()).toEqual([]);

    // Each tenant holds exactly its live admissions (1 cpu each).
    for (const t of tenants) {
      const live = admitted.filter((a) => a.tenant === t && !gone.includes(a)).length;
      const used = await V.db.execute("SELECT used FROM tenant_quota WHERE tenant = ? AND resource = 'cpu'", [t]);
      expect(Number(used.rows[0]?.used), t).toBe(live * 1000);
    }
  });
});
