// The bounded ledger resync, in this process against the real stack: 2,000
// open reservations — 1,900 ready, each with its real ModelService in the API server, and 100
// releasing whose CR and pods are gone — and the ledger wired exactly as controller/main.ts wires
// it (setupReservationController on a Manager, the controller's ServiceAccount, a read rate limit). The resync
// pages through them (500 rows per statement); ready ones are decided on the informer cache, so
// the live reads are only those of the release decisions: live GETs per resync ≤ the number of
// reservations in a release state (here 100, then 0 once they are released).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../scripts/operator/check.ts';
import { reservationKey } from '../../controller/reservation/key.ts';
import { resyncOnce } from '../../controller/reservation/resync.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { setupReservationController } from '../../controller/reservation/setup.ts';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { Manager } from '../../controller/runtime/manager.ts';
import { Metrics } from '../../controller/runtime/metrics.ts';
import { TokenBucket } from '../../controller/runtime/rate-limit.ts';
import { ulidGenerator } from '../../functions/services/deps.ts';
import { crNameFor } from '../../schema/admission.ts';
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import { ANY_REGISTRY } from '../../schema/policy.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { controllerClient } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { counterSum, ensureCrd, testLogger } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const READY = 1_900;
const RELEASING = 100;
const SPEC = { image: 'ghcr.io/acme/m:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } };

let L: LedgerDatabase;
let admin: KubeClient;
let ns: { name: string; remove(): Promise<void> };
beforeAll(async () => {
  L = await createLedgerDatabase();
  const { kc, core } = kubeClients();
  admin = new KubeClient({ kc });
  ns = await createNamespace(core, 'resync');
  await ensureCrd(admin, ns.name);
}, 600_000);
afterAll(async () => {
  await ns?.remove();
  await L?.drop();
});

/** Runs `fn` over `items` with at most `n` in flight. */
async function pool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  }));
  return out;
}

/** Reservations (+ charge movements, + bindings for the ready ones) in multi-row INSERTs. */
async function seed(rows: Array<{ id: string; state: 'ready' | 'releasing'; uid: string | null }>): Promise<void> {
  const now = new Date();
  for (let i = 0; i < rows.length; i += 250) {
    const chunk = rows.slice(i, i + 250);
    await L.db.execute(
      `INSERT INTO reservation (id, tenant, idempotency_key, request_hash, name, spec, cpu_millis, memory_mib, gpu, state, request_id, created_at, updated_at, state_changed_at)
       VALUES ${chunk.map(() => `(?, 'acme', ?, '${'h'.repeat(64)}', 'm', ?, 100, 128, 0, ?, 'seed', ?, ?, ?)`).join(', ')}`,
      chunk.flatMap((r) => [r.id, r.id, JSON.stringify({ ...SPEC, port: 8000, env: [], args: [], readinessPath: '/healthz' }), r.state, now, now, now]),
    );
    await L.db.execute(
      `INSERT INTO quota_movement (reservation_id, direction, tenant, cpu_millis, memory_mib, gpu, at) VALUES ${chunk.map(() => `(?, 'charge', 'acme', 100, 128, 0, ?)`).join(', ')}`,
      chunk.flatMap((r) => [r.id, now]),
    );
    const bound = chunk.filter((r) => r.uid);
    if (bound.length > 0) {
      await L.db.execute(
        `INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, ever_ready, first_ready_at, created_at, updated_at) VALUES ${bound.map(() => "('acme', ?, ?, ?, ?, 1, ?, ?, ?)").join(', ')}`,
        bound.flatMap((r) => [r.id, ns.name, crNameFor(r.id), r.uid, now, now, now]),
      );
    }
  }
  await L.db.execute(
    `INSERT INTO tenant_quota (tenant, resource, hard, used, updated_at) VALUES ('acme', 'cpu', 1000000, ?, ?), ('acme', 'memory', 1000000, ?, ?)`,
    [rows.length * 100, now, rows.length * 128, now],
  );
}

describe('bounded ledger resync', () => {
  it(`2,000 open reservations: pages of 500, live GETs per resync ≤ the reservations in a release state`, async () => {
    const newId = ulidGenerator();
    const ready = Array.from({ length: READY }, () => newId(new Date()));
    const releasing = Array.from({ length: RELEASING }, () => newId(new Date()));
    const t0 = Date.now();
    const uids = await pool(ready, 16, async (id) =>
      (await admin.create<ModelService>(paths.modelServices(ns.name), {
        apiVersion: 'modeldock.io/v1alpha1',
        kind: 'ModelService',
        metadata: { name: crNameFor(id), labels: { [LABELS.admissionId]: id, [LABELS.tenant]: 'acme', [LABELS.instance]: ns.name } },
        spec: SPEC,
      })).metadata.uid ?? '',
    );
    await seed([...ready.map((id, i) => ({ id, state: 'ready' as const, uid: uids[i]! })), ...releasing.map((id) => ({ id, state: 'releasing' as const, uid: null }))]);
    console.log(`seeded ${READY} CRs + ${READY + RELEASING} reservations in ${Date.now() - t0} ms`);

    // The ledger as controller/main.ts wires it: the controller's ServiceAccount, a read limit of its own.
    const metrics = new Metrics();
    const client = await controllerClient(ns.name, { metrics, fieldManager: 'modeldock-controller' });
    const ledgerClient = await controllerClient(ns.name, { metrics, fieldManager: 'modeldock-controller', readLimiter: new TokenBucket({ qps: 20, burst: 40 }) });
    const mgr = new Manager({ client, instance: ns.name, log: testLogger(), metrics });
    const { controller } = setupReservationController(mgr, {
      db: L.db,
      cluster: 'default',
      tenants: { prefix: `${ns.name}-`, instance: ns.name, maxReplicas: 16, network: { gatewayNamespaceLabels: { 'modeldock.io/gateway': 'true' }, gatewayPodLabels: { 'app.kubernetes.io/name': 'modeldock-gateway' }, ingressCidrs: [], egressAllow: [], egressDeny: [] } },
      holder: 'resync-test',
      config: { readyDeadlineMs: 600_000, releaseBlockedAfterMs: 120_000, outboxBackoff: { baseMs: 1000, capMs: 300_000 }, allowedRegistries: ANY_REGISTRY },
      fastPaths: true,
      workers: 4,
      resyncMs: 3_600_000, // one tick at start, the next one is ours (resyncOnce below)
      resyncPageSize: 500,
      client: ledgerClient,
    });
    const registry = mgr.metrics.registry;
    const counter = async (name: string, keep: (l: Record<string, string | number>) => boolean = () => true) => {
      const m = registry.getSingleMetric(name) as Parameters<typeof counterSum>[0] | undefined;
      return m ? counterSum(m, keep) : 0;
    };
    const liveGets = () => counter('modeldock_ledger_live_reads_total', (l) => l.kind === 'modelservice');
    const livePodLists = () => counter('modeldock_ledger_live_reads_total', (l) => l.kind === 'pods');
    const ledgerReconciles = () => counter('controller_runtime_reconcile_total', (l) => l.controller === 'ledger');
    const released = () => L.count(`SELECT COUNT(*) FROM reservation WHERE tenant = 'acme' AND state = 'released'`);
    const touched = () => L.count(`SELECT COUNT(*) FROM reservation WHERE tenant = 'acme' AND last_reconciled_at IS NOT NULL`);
    try {
      const t1 = Date.now();
      await mgr.start();
      await mgr.waitForLeadership();
      // First resync (at start; the informer's add events enqueue the same ids, collapsed by the queue).
      await waitFor('every reservation looked at once', async () => (await touched()) === READY + RELEASING && (await released()) === RELEASING, {
        timeoutMs: 300_000,
        intervalMs: 500,
      });
      const first = { gets: await liveGets(), lists: await livePodLists(), reconciles: await ledgerReconciles(), pages: await counter('modeldock_ledger_resync_pages_total'), ms: Date.now() - t1 };
      console.log(`first resync: ${JSON.stringify(first)}`);
      expect(first.pages).toBe(6); // 4 full pages of 500, the empty one that ends the scan, and the (empty) page of stranded placements
      expect(first.gets).toBeLessThanOrEqual(RELEASING);
      expect(first.lists).toBeLessThanOrEqual(RELEASING);

      // A second resync, now that nothing is in a release state: no live read at all.
      const t2 = Date.now();
      const before = await ledgerReconciles();
      const tick = await resyncOnce({ cluster: 'default', shards: () => ledgerShards(L.db), enqueue: (key) => controller.enqueue(reservationKey(key)), pageSize: 500, now: () => new Date() }, new AbortController().signal);
      expect(tick).toEqual({ pages: 5, enqueued: READY }); // 4 of open reservations, 1 of stranded placements
      await waitFor('the second resync to be reconciled', async () => (await ledgerReconciles()) >= before + READY, { timeoutMs: 300_000, intervalMs: 500 });
      const second = { gets: (await liveGets()) - first.gets, lists: (await livePodLists()) - first.lists, reconciles: (await ledgerReconciles()) - before, ms: Date.now() - t2 };
      console.log(`second resync: ${JSON.stringify(second)}`);
      expect(second.gets).toBe(0);
      expect(second.lists).toBe(0);
      expect(await checkLedger(L.db, null, ns.name)).toEqual([]);
    } finally {
      await mgr.stop();
    }
  }, 900_000);
});
