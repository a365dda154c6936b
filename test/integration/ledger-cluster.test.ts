// What the ledger sends to and reads from the API server, against the real control plane, as
// the namespace's modeldock-controller ServiceAccount:
//  - the never-Ready deadline delete carries the preconditions the decision was made on, and the
//    API server refuses it when the CR moved on (new resourceVersion) or was replaced (new UID);
//  - the reconciler passes uid + resourceVersion for that reason, and on `precondition-failed`
//    requeues without any state change;
//  - the pod reader lists a Terminating pod (finalizer held) as terminating, so the release rule
//    "no pod left, Terminating included" fails here in seconds, not only in an e2e.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeReservationCluster, type DeleteOutcome, type ReservationCluster } from '../../controller/reservation/cluster.ts';
import { ledgerMetrics } from '../../controller/reservation/metrics.ts';
import { reservationReconciler } from '../../controller/reservation/reconcile.ts';
import { reservationKey } from '../../controller/reservation/key.ts';
import { leaderFence } from '../../controller/reservation/leader-fence.ts';
import { loadReservationRecord, loadReservationRecords } from '../../controller/reservation/record.ts';
import type { ClaimedRow } from '../../controller/reservation/outbox-store.ts';
import { RecordPrefetch } from '../../controller/reservation/prefetch.ts';
import { enqueue } from '../../ledger/outbox.ts';
import { splitKey } from '../../controller/runtime/controller.ts';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { Metrics } from '../../controller/runtime/metrics.ts';
import { crNameFor } from '../../schema/admission.ts';
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import { ANY_REGISTRY } from '../../schema/policy.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { makeModelService } from '../support/builders.ts';
import { controllerClient, labelAsTenantNamespace } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { claimEverywhere, insertAdmission } from '../support/ledger-rows.ts';
import { StatementLog } from '../support/recording-db.ts';
import { ensureCrd, msPath, testLogger } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';
import { createPlacer } from '../../ledger/placement.ts';

/** What the controller passes a reconcile (controller/runtime/controller.ts). */
const reconcileContext = () => ({ log: testLogger(), fresh: false, signal: new AbortController().signal });

const { kc, core } = kubeClients();
const admin = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
let cluster: ReservationCluster; // the code under test, with the controller's credentials
let ledger: LedgerDatabase;

beforeAll(async () => {
  ns = await createNamespace(core, 'ledger-cluster');
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
  await ensureCrd(admin, ns.name);
  cluster = kubeReservationCluster(await controllerClient(ns.name), { ensureTenantSpace: async () => undefined }); // this suite's namespace stands in for the tenant's
  await labelAsTenantNamespace(ns.name, 'acme');
  ledger = await createLedgerDatabase();
  await ledger.setQuota('acme', 'cpu=100', 'memory=100000Mi', 'nvidia.com/gpu=10');
});
afterAll(async () => {
  await ledger?.drop();
  await ns?.remove();
});

let n = 0;
/** A ModelService as the deliverer creates it (labels of an admission), created by the admin. */
async function createCR(name = `ms-${++n}`, admissionId = `01CLUSTER${String(n).padStart(17, '0')}`): Promise<ModelService> {
  return admin.create<ModelService>(msPath(ns.name), makeModelService(name).namespace(ns.name).admitted(admissionId, 'acme').obj());
}
/** A status write: the CR's resourceVersion moves on, its spec and UID do not. */
async function bumpStatus(ms: ModelService, message: string): Promise<ModelService> {
  return admin.mergePatch<ModelService>(`${msPath(ns.name, ms.metadata.name)}/status`, { status: { phase: 'Pending', message } });
}
const live = (name: string) => admin.getOrUndefined<ModelService>(msPath(ns.name, name));
/** The delete went through: the CR is gone or carries a deletionTimestamp. */
const deleted = async (name: string) => {
  const ms = await live(name);
  return !ms || Boolean(ms.metadata.deletionTimestamp);
};

describe('ledger cluster: the deadline delete and its preconditions', () => {
  it('a CR whose resourceVersion moved on is NOT deleted with the old resourceVersion', async () => {
    const ms = await createCR();
    const seen = (await cluster.readModelService(ns.name, ms.metadata.name))!;
    const moved = await bumpStatus(ms, 'moved on');
    expect(moved.metadata.resourceVersion).not.toBe(seen.resourceVersion);

    const stale = await cluster.deleteModelService(ns.name, ms.metadata.name, { uid: seen.uid, resourceVersion: seen.resourceVersion });
    expect(stale).toBe<DeleteOutcome>('precondition-failed');
    const after = await live(ms.metadata.name);
    expect(after?.metadata.uid).toBe(seen.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();

    // The same delete with what the object is now goes through: the refusal was the precondition.
    const current = (await cluster.readModelService(ns.name, ms.metadata.name))!;
    expect(await cluster.deleteModelService(ns.name, ms.metadata.name, { uid: current.uid, resourceVersion: current.resourceVersion })).toBe('deleted');
    expect(await deleted(ms.metadata.name)).toBe(true);
  });

  it('a same-named CR re-created with a new UID is NOT deleted with the old UID', async () => {
    const first = await createCR();
    const name = first.metadata.name;
    await admin.delete(msPath(ns.name, name), { propagationPolicy: 'Background' });
    await waitFor('the first CR to be gone', async () => !(await live(name)));
    const second = await createCR(name, first.metadata.labels![LABELS.admissionId]);
    expect(second.metadata.uid).not.toBe(first.metadata.uid);

    expect(await cluster.deleteModelService(ns.name, name, { uid: first.metadata.uid! })).toBe<DeleteOutcome>('precondition-failed');
    const after = await live(name);
    expect(after?.metadata.uid).toBe(second.metadata.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();

    expect(await cluster.deleteModelService(ns.name, name, { uid: second.metadata.uid! })).toBe('deleted');
    expect(await deleted(name)).toBe(true);
  });

  it('a CR that is already gone answers gone', async () => {
    expect(await cluster.deleteModelService(ns.name, 'never-created', { uid: 'u' })).toBe<DeleteOutcome>('gone');
  });
});

describe('ledger cluster: pods of an admission', () => {
  const podBody = (name: string, admissionId: string) => ({
    metadata: { name, labels: { [LABELS.admissionId]: admissionId }, finalizers: ['modeldock.io/test-hold'] },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'main',
          image: 'example.invalid/hold:1',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          // the namespace's LimitRange and ResourceQuota (k8s/base/limits.yaml) refuse a pod without limits
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } },
        },
      ],
    },
  });
  const release = (name: string) => admin.mergePatch(`/api/v1/namespaces/${ns.name}/pods/${name}`, { metadata: { finalizers: null } }).catch(() => undefined);

  it('lists a deleted pod held by a finalizer as terminating, and only the pods of that admission', async () => {
    const id = '01PODS0000000000000000000A';
    await admin.create(`/api/v1/namespaces/${ns.name}/pods`, podBody('held', id));
    await admin.create(`/api/v1/namespaces/${ns.name}/pods`, podBody('other', '01PODS0000000000000000000B'));
    try {
      expect(await cluster.listPods(ns.name, id)).toEqual([{ name: 'held', terminating: false }]);
      await admin.delete(`/api/v1/namespaces/${ns.name}/pods/held`, { propagationPolicy: 'Background' });
      expect(await cluster.listPods(ns.name, id)).toEqual([{ name: 'held', terminating: true }]);
    } finally {
      await Promise.all(['held', 'other'].map(release));
      await admin.delete(`/api/v1/namespaces/${ns.name}/pods/other`).catch(() => undefined);
    }
    await waitFor('the held pod to be gone once released', async () => (await cluster.listPods(ns.name, id)).length === 0);
  });
});

describe('ledger reconciler: the never-Ready deadline delete', () => {
  const READY_DEADLINE_MS = 600_000;

  /** The real cluster, with every delete recorded; `beforeDelete` runs just before it is sent. */
  function recording(beforeDelete: () => Promise<void> = async () => undefined) {
    const deletes: Array<{ name: string; pre: { uid: string; resourceVersion?: string }; outcome: DeleteOutcome }> = [];
    const wrapped: ReservationCluster = {
      ...cluster,
      async deleteModelService(namespace, name, pre) {
        await beforeDelete();
        const outcome = await cluster.deleteModelService(namespace, name, pre);
        deletes.push({ name, pre: { ...pre }, outcome });
        return outcome;
      },
    };
    return { deletes, wrapped };
  }

  async function neverReadyAdmission(): Promise<{ id: string; ms: ModelService }> {
    const placeholder = await insertAdmission(ledger.db, { state: 'delivered' });
    // The CR under the admission's deterministic name, bound with its UID, never Ready.
    const ms = await createCR(crNameFor(placeholder), placeholder);
    await ledger.db.execute(
      `INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, created_at, updated_at) VALUES ('acme', ?, ?, ?, ?, ?, ?)`,
      [placeholder, ns.name, ms.metadata.name, ms.metadata.uid!, new Date(), new Date()],
    );
    return { id: placeholder, ms };
  }

  function reconciler(c: ReservationCluster) {
    return reservationReconciler({
      db: ledger.db,
      placer: createPlacer(),
      cluster: () => c,
      namespaceFor: () => ns.name,
      fence: leaderFence({ db: ledger.db, cluster: 'default', holder: 'test', now: () => new Date(), log: testLogger() }),
      // Past the deadline of every CR this suite creates (the deadline runs from the CR's creationTimestamp).
      now: () => new Date(Date.now() + 2 * READY_DEADLINE_MS),
      config: { readyDeadlineMs: READY_DEADLINE_MS, releaseBlockedAfterMs: 60_000, outboxBackoff: { baseMs: 1000, capMs: 300_000 }, allowedRegistries: ANY_REGISTRY },
      takeClaims: () => [],
      keepClaims: () => undefined,
      metrics: ledgerMetrics(new Metrics().registry),
      log: testLogger(),
    });
  }

  it('deletes with the uid AND the resourceVersion it decided on, then moves to releasing', async () => {
    const { id, ms } = await neverReadyAdmission();
    const { deletes, wrapped } = recording();
    const result = await reconciler(wrapped)(splitKey(reservationKey({ tenant: 'acme', id })), reconcileContext());

    expect(deletes).toEqual([{ name: ms.metadata.name, pre: { uid: ms.metadata.uid, resourceVersion: ms.metadata.resourceVersion }, outcome: 'deleted' }]);
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect((await loadReservationRecord(ledger.db, { tenant: 'acme', id }))?.state).toBe('releasing');
    expect(await deleted(ms.metadata.name)).toBe(true);
  });

  it('on precondition-failed (the CR changed after the decision): no delete, no state change, requeue to re-read', async () => {
    const { id, ms } = await neverReadyAdmission();
    const { deletes, wrapped } = recording(async () => {
      await bumpStatus(ms, 'changed between the read and the delete');
    });
    const result = await reconciler(wrapped)(splitKey(reservationKey({ tenant: 'acme', id })), reconcileContext());

    expect(deletes).toEqual([{ name: ms.metadata.name, pre: { uid: ms.metadata.uid, resourceVersion: ms.metadata.resourceVersion }, outcome: 'precondition-failed' }]);
    expect(result).toEqual({ requeue: true });
    expect((await loadReservationRecord(ledger.db, { tenant: 'acme', id }))?.state).toBe('delivered');
    const after = await live(ms.metadata.name);
    expect(after?.metadata.uid).toBe(ms.metadata.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('ledger reconciler: a claimed delivery starts from the record read with its claim', () => {
  async function claimedCreate(): Promise<{ id: string; row: ClaimedRow; fence: ReturnType<typeof leaderFence> }> {
    const id = await insertAdmission(ledger.db);
    await enqueue(ledger.db, [{ tenant: 'acme', reservationId: id, kind: 'create', dedupeKey: `create:${id}`, requestId: 'r', cluster: 'default' }], new Date());
    const fence = leaderFence({ db: ledger.db, cluster: 'default', holder: 'prefetch-test', now: () => new Date(), log: testLogger() });
    const epoch = await fence.forTenants(['acme']);
    const row = (await claimEverywhere(ledger.db, { cluster: 'default', holder: 'prefetch-test', epoch, leaseMs: 60_000, limit: 1000, now: new Date() })).find((r) => r.reservationId === id);
    if (!row) throw new Error('the create row was not claimed');
    return { id, row, fence };
  }

  /** The reconciler on a statement-recording ledger; `before` = the statements issued before the CR create. */
  function deliverer(row: ClaimedRow, fence: ReturnType<typeof leaderFence>, prefetch: RecordPrefetch) {
    const log = new StatementLog();
    let before: string[] | undefined;
    const run = reservationReconciler({
      db: log.wrap(ledger.db),
      placer: createPlacer(),
      cluster: () => ({
        ...cluster,
        async createModelService(ms) {
          before = log.statements.map((s) => s.sql);
          return cluster.createModelService(ms);
        },
      }),
      namespaceFor: () => ns.name,
      fence,
      now: () => new Date(),
      config: { readyDeadlineMs: 600_000, releaseBlockedAfterMs: 60_000, outboxBackoff: { baseMs: 1000, capMs: 300_000 }, allowedRegistries: ANY_REGISTRY },
      takeClaims: (rid) => (rid === row.reservationId ? [row] : []),
      keepClaims: () => undefined,
      prefetched: (key) => prefetch.take(key),
      metrics: ledgerMetrics(new Metrics().registry),
      log: testLogger(),
    });
    return { run: () => run(splitKey(reservationKey({ tenant: row.tenant, id: row.reservationId })), reconcileContext()), before: () => before };
  }

  /** The delivered CR carries the controller's finalizer, and no controller runs here: lift it, delete. */
  const removeCR = async (id: string) => {
    await admin.mergePatch(msPath(ns.name, crNameFor(id)), { metadata: { finalizers: null } }).catch(() => undefined);
    await admin.delete(msPath(ns.name, crNameFor(id))).catch(() => undefined);
  };

  const HOLDS_CLAIM = /^SELECT 1 AS held FROM outbox o JOIN tenant_fence f/;

  it('creates the CR with no read of the reservation before it (only the re-check of its claim), then binds it and marks the reservation looked at', async () => {
    const { id, row, fence } = await claimedCreate();
    const prefetch = new RecordPrefetch();
    await prefetch.load(ledger.db, [row]);
    expect(prefetch.size).toBe(1);
    const d = deliverer(row, fence, prefetch);
    await d.run();
    expect(d.before()).toEqual([expect.stringMatching(HOLDS_CLAIM)]);
    expect(prefetch.size).toBe(0); // handed over once
    const rec = await loadReservationRecord(ledger.db, { tenant: 'acme', id });
    const cr = await live(crNameFor(id));
    expect(rec?.state).toBe('delivered');
    expect(rec?.binding?.uid).toBe(cr?.metadata.uid);
    expect(rec?.lastReconciledAt).not.toBeNull(); // the CR's informer event need not write it
    await removeCR(id);
  });

  it('without a fresh prefetched record the delivery reads the reservation first', async () => {
    const { id, row, fence } = await claimedCreate();
    let clock = 0;
    const prefetch = new RecordPrefetch({ maxAgeMs: 1000, now: () => clock });
    await prefetch.load(ledger.db, [row]);
    clock = 1001; // waited too long in the work queue
    const d = deliverer(row, fence, prefetch);
    await d.run();
    expect(d.before()).toEqual([expect.stringMatching(/FROM reservation r LEFT JOIN binding b/), expect.stringMatching(HOLDS_CLAIM)]);
    expect((await loadReservationRecord(ledger.db, { tenant: 'acme', id }))?.state).toBe('delivered');
    await removeCR(id);
  });

  it('loadReservationRecords returns exactly the records asked for, equal to one-by-one reads', async () => {
    const [a, b, other] = [await insertAdmission(ledger.db), await insertAdmission(ledger.db), await insertAdmission(ledger.db)];
    const got = await loadReservationRecords(ledger.db, [{ tenant: 'acme', id: a }, { tenant: 'acme', id: b }, { tenant: 'nobody', id: other }]);
    expect(got.map((r) => r.id).sort()).toEqual([a, b].sort());
    expect(got.find((r) => r.id === a)).toEqual(await loadReservationRecord(ledger.db, { tenant: 'acme', id: a }));
  });
});
