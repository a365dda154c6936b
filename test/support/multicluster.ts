// ModelDock on the multicluster stack (test/global-setup.ts, project `multicluster`): one ledger,
// the clusters c1–c3 registered in it, ModelDock installed on each as shipped with its own
// controller process (CLUSTER=c<i>, authenticated as that cluster's ServiceAccount: no controller
// holds another cluster's credentials), and the Worker serving the tenant API for a few tenants.
import { randomBytes } from 'node:crypto';
import { expect, inject } from 'vitest';
import type { KubeClient } from '../../controller/runtime/kube.ts';
import { readCluster } from '../../ledger/cluster-store.ts';
import { LABELS } from '../../schema/model-service.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { addCluster } from '../../scripts/operator/cluster-admin.ts';
import { adminClient, createDatabaseSecret } from '../../scripts/testenv/install.ts';
import type { StackCluster } from '../../scripts/testenv/stack.ts';
import { startController, type ControllerProcess } from './controller-process.ts';
import { uninstallModelDock, type InstallTarget } from './install.ts';
import { createLedgerDatabase, type LedgerDatabase } from './ledger-database.ts';
import { waitFor } from './wait.ts';
import { startWorker, type WorkerInstance } from './worker.ts';
import { tenantApi, untilAllHold, type ApiBody, type ApiCall } from './tenant-api.ts';

export const MS_PATH = '/apis/modeldock.io/v1alpha1/modelservices';

export interface Member {
  cluster: StackCluster;
  admin: KubeClient;
  target: InstallTarget;
  namespace: string;
  controller: ControllerProcess;
}

export interface Fleet {
  ledger: LedgerDatabase;
  members: Member[];
  member(name: string): Member;
  /**
   * Starts (another) controller for the member's cluster; it replaces `member.controller`. `env`:
   * more of its environment (a crash point); `waitReady` false: until it answers /healthz only.
   */
  startController(m: Member, o?: { env?: Record<string, string>; waitReady?: boolean }): Promise<ControllerProcess>;
  /** Until the cluster is in `state` (default ready; null: any) and its heartbeat names this controller (it took the cluster over). */
  untilTakenOver(m: Member, state?: string | null): Promise<void>;
  api(tenant: string, ...call: Parameters<ApiCall>): ReturnType<ApiCall>;
  admit(tenant: string): Promise<string>;
  untilState(tenant: string, ids: readonly string[], state: string): Promise<ApiBody[]>;
  /** Deletes the admissions and waits until each is released (its pods gone, its charge and room given back). */
  release(tenant: string, ids: readonly string[]): Promise<void>;
  /** The ModelServices on one cluster (every namespace), by admission id. */
  modelServicesOn(m: Member): Promise<Map<string, string>>;
  /** Until the checker, given a client per cluster, finds no drift. */
  untilConsistent(): Promise<void>;
  stop(): Promise<void>;
}

const keyOf = (t: string) => `${t}-key-0123456789abcdef`;

export async function startFleet(o: { tenants: readonly string[]; capacity: Amounts; leaseMs: number; workerVars?: Record<string, string> }): Promise<Fleet> {
  const stack = inject('stack');
  const { clusters } = stack;
  expect(clusters.map((c) => c.name)).toEqual(['c1', 'c2', 'c3']);
  const ledger = await createLedgerDatabase();
  for (const t of o.tenants) await ledger.setQuota(t, 'cpu=16', 'memory=64Gi', 'nvidia.com/gpu=0', 'modelservices=100');
  // The operator registers the clusters (joining: each becomes ready when its controller takes it over).
  for (const c of clusters) await addCluster({ db: ledger.db, actor: 'ops-mc', now: () => new Date() }, { name: c.name, capacity: o.capacity, leaseMs: o.leaseMs });
  const namespace = `mc-${randomBytes(3).toString('hex')}`;
  const members: Member[] = [];
  const controllers: ControllerProcess[] = [];
  let started = 0;
  const launch = async (m: Omit<Member, 'controller'>, name: string, o: { env?: Record<string, string>; waitReady?: boolean } = {}) => {
    const c = await startController(name, m.namespace, { ...o.env, DATABASE_URL: ledger.url, CLUSTER: m.cluster.name }, o.waitReady ?? true, m.target);
    controllers.push(c);
    return c;
  };
  for (const c of clusters) {
    const admin = adminClient(c.kubeconfig);
    await admin.create('/api/v1/namespaces', { metadata: { name: namespace } });
    const target: InstallTarget = { binDir: stack.binDir, kubeconfig: c.kubeconfig, dir: c.dir };
    await createDatabaseSecret(target, namespace, ledger.url);
    const base = { cluster: c, admin, target, namespace };
    members.push({ ...base, controller: await launch(base, `${c.name}-ctl-${++started}`) });
  }
  const untilTakenOver: Fleet['untilTakenOver'] = async (m, state = 'ready') => {
    await waitFor(`${m.cluster.name} to be taken over by ${m.controller.name}`, async () => {
      const c = await readCluster(ledger.db, m.cluster.name);
      return (state === null || c?.state === state) && c?.heartbeatBy?.startsWith(`${m.controller.name}_`) ? true : undefined;
    });
  };
  for (const m of members) await untilTakenOver(m);
  const worker: WorkerInstance = await startWorker({ databaseUrl: ledger.url, keys: Object.fromEntries(o.tenants.map((t) => [t, keyOf(t)])), vars: o.workerVars ?? {} });

  let n = 0;
  const apis = new Map(o.tenants.map((t) => [t, tenantApi(worker, keyOf(t))]));
  const api: Fleet['api'] = (tenant, path, init) => apis.get(tenant)!(path, init);
  const untilState: Fleet['untilState'] = (tenant, ids, state) =>
    untilAllHold(apis.get(tenant)!, `${ids.length} admission(s) of ${tenant} → ${state}`, ids, (b) => b.state === state, { timeoutMs: 120_000 });
  const fleet: Fleet = {
    ledger,
    members,
    member: (name) => members.find((m) => m.cluster.name === name)!,
    async startController(m, o) {
      m.controller = await launch(m, `${m.cluster.name}-ctl-${++started}`, o);
      return m.controller;
    },
    untilTakenOver,
    api,
    async admit(tenant) {
      const i = ++n;
      const r = await api(tenant, '/requests', { method: 'POST', idempotencyKey: `${namespace}-${i}`, body: { name: `m${i}`, image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id as string;
    },
    untilState,
    async release(tenant, ids) {
      for (const id of ids) expect((await api(tenant, `/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
      await untilState(tenant, ids, 'released');
    },
    async modelServicesOn(m) {
      const list = await m.admin.get<{ items: Array<{ metadata: { name: string; labels?: Record<string, string> } }> }>(MS_PATH);
      return new Map(list.items.flatMap((ms) => (ms.metadata.labels?.[LABELS.admissionId] ? [[ms.metadata.labels[LABELS.admissionId]!, ms.metadata.name] as const] : [])));
    },
    async untilConsistent() {
      const clients = new Map(members.map((m) => [m.cluster.name, m.admin] as const));
      await waitFor('the ledger and the three clusters to agree', async () => {
        const drift = await checkLedger(ledger.db, clients, namespace, { settled: true });
        if (drift.length > 0) throw new Error(`${drift.length} drift(s): ${JSON.stringify(drift).slice(0, 1500)}`);
        return true;
      }, { timeoutMs: 30_000 });
    },
    async stop() {
      await Promise.all(controllers.map((c) => c.proc.stop()));
      await worker.stop();
      for (const m of members) {
        await uninstallModelDock(m.namespace, m.target);
        // The install's namespace, and the tenant namespaces its controller created (labelled with it).
        const tenants = await m.admin.list<{ metadata: { name: string } }>('/api/v1/namespaces', { labelSelector: `${LABELS.instance}=${m.namespace}` });
        for (const name of [m.namespace, ...tenants.items.map((t) => t.metadata.name)]) await m.admin.delete(`/api/v1/namespaces/${name}`).catch(() => undefined);
      }
      await ledger.drop();
    },
  };
  return fleet;
}
