// The cross-tenant fair pick end to end (issue 30): the Worker in workerd, the controller as its
// ServiceAccount serving a registered cluster of 4 rooms (CLUSTER=<name>), KWOK pods. Tenant acme
// (weight 1) holds every room and has 100 admissions queued for room; tenant bravo (weight 2)
// arrives with 10. Then acme's running admissions are deleted one at a time, oldest first: each
// release frees one room, and the controller's trigger offers it to the lowest weighted share.
// Bravo's first admission comes before acme's next, and while both wait the admissions follow the
// weights; the cluster's room is never over-reserved (sampled every 100 ms) and the ledger checker
// finds no drift.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCluster } from '../../scripts/operator/cluster-admin.ts';
import { setQueueSetting } from '../../scripts/operator/queue-report.ts';
import { readAllAllotments, sumOf } from '../../ledger/cluster-store.ts';
import { ledgerAnchors } from '../../ledger/anchors.ts';
import { startSystem, TENANT, type System } from '../support/system.ts';
import { tenantApi, type ApiBody, type ApiCall } from '../support/tenant-api.ts';
import { waitFor } from '../support/wait.ts';
import { maxSampler } from '../support/max-sampler.ts';

const CLUSTER = 'e2e-fair';
const ROOMS = 4;
const OTHER = 'bravo';
const OTHER_KEY = 'bravo-e2e-key-0123456789abcdef';
let sys: System;
let bravo: ApiCall;

beforeAll(async () => {
  sys = await startSystem({ keys: { [OTHER]: OTHER_KEY } });
  await sys.ledger.setQuota(OTHER, 'cpu=16', 'memory=64Gi', 'modelservices=1000');
  bravo = tenantApi(sys.worker, OTHER_KEY);
  await addCluster({ db: sys.ledger.db, actor: 'ops-e2e', now: () => new Date() }, { name: CLUSTER, capacity: { cpu: ROOMS * 100, memory: ROOMS * 128, 'nvidia.com/gpu': 0, modelservices: ROOMS } });
  expect(await setQueueSetting(sys.ledger.db, TENANT, 'weight', 1)).toBe(true);
  expect(await setQueueSetting(sys.ledger.db, OTHER, 'weight', 2)).toBe(true);
});
afterAll(async () => sys?.stop());

let n = 0;
/** A queueing admission of one room (100m, 128Mi). */
async function submit(api: ApiCall, tenant: string): Promise<{ status: number; body: ApiBody }> {
  const body = { name: `f${++n}`, image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' }, onShortQuota: 'queue' };
  return api('/requests', { method: 'POST', body, idempotencyKey: `${sys.namespace}-${tenant}-${n}` });
}

/** Samples the cluster's reserved model services every 100 ms until stopped; returns the most seen. */
const roomChecker = () => maxSampler(async () => sumOf(await readAllAllotments(sys.ledger.db, await ledgerAnchors(sys.ledger.db), CLUSTER), 'reserved').modelservices);

/** Admissions that left the queue for a room, in the order they left it. */
async function dequeued(): Promise<Array<{ tenant: string; id: string }>> {
  const r = await sys.ledger.db.execute("SELECT tenant, id FROM reservation WHERE dequeued_at IS NOT NULL AND state NOT IN ('cancelled', 'expired') ORDER BY dequeued_at, id");
  return r.rows.map((row) => ({ tenant: String(row.tenant), id: String(row.id) }));
}

describe('the fair pick of freed cluster room', () => {
  it('acme holds every room with 100 queued; bravo (weight 2) arrives with 10: bravo first, then the weights', { timeout: 300_000 }, async () => {
    const ctl = await sys.startController('ctl-fair', { CLUSTER });
    await waitFor('the cluster ready', async () => ((await sys.ledger.count(`SELECT COUNT(*) FROM cluster WHERE name = ? AND state = 'ready'`, [CLUSTER])) === 1 ? true : undefined));
    const checker = roomChecker();
    try {
      const running: Array<{ api: ApiCall; id: string }> = [];
      for (let i = 0; i < ROOMS; i++) {
        const r = await submit(sys.api, TENANT);
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body.cluster).toBe(CLUSTER);
        running.push({ api: sys.api, id: r.body.id as string });
      }
      const queuedIds: string[] = [];
      for (let i = 0; i < 100; i++) {
        const r = await submit(sys.api, TENANT);
        expect(r.status).toBe(202);
        queuedIds.push(r.body.id as string);
      }
      const ofBravo: string[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await submit(bravo, OTHER);
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        ofBravo.push(r.body.id as string);
      }
      expect((await bravo(`/requests/${ofBravo[0]!}`)).body).toMatchObject({ state: 'queued', cluster: null, queue: { position: 1, estimate: { seconds: null } } });

      // Release the oldest running one at a time; each freed room is taken before the next delete.
      const apiOf = (tenant: string) => (tenant === OTHER ? bravo : sys.api);
      let seen = 0;
      while ((await sys.ledger.count("SELECT queued FROM tenant_quota WHERE tenant = ? AND resource = 'cpu'", [OTHER])) > 0) {
        expect(seen).toBeLessThan(40);
        const oldest = running.shift()!;
        expect((await oldest.api(`/requests/${oldest.id}`, { method: 'DELETE' })).status).toBe(202);
        const next = await waitFor('the freed room taken from the queue', async () => {
          const all = await dequeued();
          return all.length > seen ? all : undefined;
        }, { timeoutMs: 30_000 });
        expect(next).toHaveLength(seen + 1); // one room freed, one admission
        running.push({ api: apiOf(next[seen]!.tenant), id: next[seen]!.id });
        seen++;
      }
      const sequence = (await dequeued()).map((d) => (d.tenant === OTHER ? 'B' : 'A'));
      const ofA = sequence.filter((t) => t === 'A').length;
      console.log(`[measure] e2e fair pick, weights acme 1 : bravo 2, ${ROOMS} rooms: ${sequence.join('')} — bravo:acme admissions ${(10 / ofA).toFixed(2)} while both waited`);
      expect(sequence.indexOf('B')).toBeLessThanOrEqual(1);
      expect(10 / ofA).toBeGreaterThanOrEqual(1.5);
      expect(10 / ofA).toBeLessThanOrEqual(4);

      // Clean up: acme's queue cancelled (never charged), everything running deleted and released.
      for (const id of queuedIds) expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
      for (const r of running) expect((await r.api(`/requests/${r.id}`, { method: 'DELETE' })).status).toBe(202);
      await waitFor('every room given back', async () => (sumOf(await readAllAllotments(sys.ledger.db, await ledgerAnchors(sys.ledger.db), CLUSTER), 'reserved').modelservices === 0 ? true : undefined), { timeoutMs: 120_000 });
      await sys.untilSettled();
    } finally {
      expect(await checker.stop()).toBeLessThanOrEqual(ROOMS);
      await ctl.proc.stop();
    }
  });
});
