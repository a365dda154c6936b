// Placement across three real Kubernetes clusters (issue 33, acceptance A1 and A2; docs/multi-cluster.md
// step 6): c1–c3 are three kube-apiservers on one etcd, each with ModelDock installed as shipped and
// its own controller process (CLUSTER=c<i>, authenticated as that cluster's ServiceAccount; no
// controller holds another cluster's credentials). The Worker places each admission in its charging
// transaction; the ModelService then exists on that one cluster only, created by that cluster's
// controller, which also releases it.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { KubeClient } from '../../controller/runtime/kube.ts';
import { readCluster } from '../../ledger/cluster-store.ts';
import { writeAffinity } from '../../ledger/placement.ts';
import { LABELS } from '../../schema/model-service.ts';
import { addCluster } from '../../scripts/operator/cluster-admin.ts';
import { adminClient, createDatabaseSecret } from '../../scripts/testenv/install.ts';
import type { StackCluster } from '../../scripts/testenv/stack.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { startController, type ControllerProcess } from '../support/controller-process.ts';
import { uninstallModelDock, type InstallTarget } from '../support/install.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { waitFor } from '../support/wait.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';

const TENANTS = ['mc-a', 'mc-b', 'mc-c'] as const;
const AFFINE = 'mc-aff';
const keyOf = (t: string) => `${t}-key-0123456789abcdef`;
/** Four ModelServices per cluster: the resource placement runs out of first. */
const CAPACITY = { cpu: 64_000, memory: 256 * 1024, 'nvidia.com/gpu': 0, modelservices: 4 };
const MS_PATH = '/apis/modeldock.io/v1alpha1/modelservices';

interface Member {
  cluster: StackCluster;
  admin: KubeClient;
  target: InstallTarget;
  namespace: string;
  controller: ControllerProcess;
}

let ledger: LedgerDatabase;
let worker: WorkerInstance;
const members: Member[] = [];
let n = 0;

beforeAll(async () => {
  const stack = inject('stack');
  const clusters = stack.clusters ?? [];
  expect(clusters.map((c) => c.name)).toEqual(['c1', 'c2', 'c3']);
  ledger = await createLedgerDatabase();
  for (const t of [...TENANTS, AFFINE]) await ledger.setQuota(t, 'cpu=16', 'memory=64Gi', 'nvidia.com/gpu=0', 'modelservices=100');
  await writeAffinity(ledger.db, AFFINE, ['c1', 'c2', 'c3']);
  // The operator registers the clusters (joining: each becomes ready when its controller takes it over).
  for (const c of clusters) await addCluster({ db: ledger.db, actor: 'ops-mc', now: () => new Date() }, { name: c.name, capacity: CAPACITY, leaseMs: 10_000 });
  const namespace = `mc-${randomBytes(3).toString('hex')}`;
  for (const c of clusters) {
    const admin = adminClient(c.kubeconfig);
    await admin.create('/api/v1/namespaces', { metadata: { name: namespace } });
    const target: InstallTarget = { binDir: stack.binDir, kubeconfig: c.kubeconfig, dir: join(stack.runDir, 'clusters', c.name) };
    await createDatabaseSecret(target, namespace, ledger.url);
    const controller = await startController(`${c.name}-ctl`, namespace, { DATABASE_URL: ledger.url, CLUSTER: c.name }, true, target);
    members.push({ cluster: c, admin, target, namespace, controller });
  }
  // Each controller, once it leads, takes its cluster over (its heartbeat names it).
  for (const m of members) {
    await waitFor(`${m.cluster.name} to be taken over by its controller`, async () => {
      const c = await readCluster(ledger.db, m.cluster.name);
      return c?.state === 'ready' && c.heartbeatBy?.startsWith(`${m.controller.name}_`) ? true : undefined;
    });
  }
  worker = await startWorker({ databaseUrl: ledger.url, keys: Object.fromEntries([...TENANTS, AFFINE].map((t) => [t, keyOf(t)])), vars: { PLACEMENT_POLICY: 'affinity' } });
});

afterAll(async () => {
  await Promise.all(members.map((m) => m.controller.proc.stop()));
  await worker?.stop();
  for (const m of members) {
    await uninstallModelDock(m.namespace, m.target);
    // The install's namespace, and the tenant namespaces its controller created (labelled with it).
    const tenants = await m.admin.list<{ metadata: { name: string } }>('/api/v1/namespaces', { labelSelector: `${LABELS.instance}=${m.namespace}` });
    for (const name of [m.namespace, ...tenants.items.map((t) => t.metadata.name)]) await m.admin.delete(`/api/v1/namespaces/${name}`).catch(() => undefined);
  }
  await ledger?.drop();
});

async function api(tenant: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await worker.fetch(path, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${keyOf(tenant)}`, 'Content-Type': 'application/json', ...(init.method === 'POST' ? { 'Idempotency-Key': `mc-${++n}-${randomBytes(4).toString('hex')}` } : {}) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function admit(tenant: string): Promise<string> {
  const r = await api(tenant, '/requests', { method: 'POST', body: { name: `m${++n}`, image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

const stateOf = async (tenant: string, id: string) => (await api(tenant, `/requests/${id}`)).body;
const untilState = (tenant: string, ids: readonly string[], state: string) =>
  waitFor(`${ids.length} admission(s) of ${tenant} → ${state}`, async () => {
    const bodies = await Promise.all(ids.map((id) => stateOf(tenant, id)));
    return bodies.every((b) => b.state === state) ? bodies : undefined;
  }, { timeoutMs: 120_000 });

/** The ModelServices of every tenant namespace on one cluster, by admission id. */
async function modelServicesOn(m: Member): Promise<Map<string, string>> {
  const list = await m.admin.get<{ items: Array<{ metadata: { name: string; labels?: Record<string, string> } }> }>(MS_PATH);
  return new Map(list.items.flatMap((ms) => (ms.metadata.labels?.[LABELS.admissionId] ? [[ms.metadata.labels[LABELS.admissionId]!, ms.metadata.name] as const] : [])));
}

/** Deletes the admissions and waits until each is released (its pods gone, its charge and room given back). */
async function release(tenant: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) expect((await api(tenant, `/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
  await untilState(tenant, ids, 'released');
}

/** The checker with a client per cluster: the ledger's own checks, and each cluster against the admissions placed on it. */
async function untilConsistent(): Promise<void> {
  const clients = new Map(members.map((m) => [m.cluster.name, m.admin] as const));
  await waitFor('the ledger and the three clusters to agree', async () => {
    const drift = await checkLedger(ledger.db, clients, members[0]!.namespace, { settled: true });
    if (drift.length > 0) throw new Error(`${drift.length} drift(s): ${JSON.stringify(drift).slice(0, 1500)}`);
    return true;
  }, { timeoutMs: 30_000 });
}

const reservedOf = (cluster: string) =>
  ledger.count('SELECT COALESCE(SUM(reserved_modelservices), 0) FROM cluster_allotment WHERE cluster = ?', [cluster]);

describe('placement across three real clusters', () => {
  it('A1: 10 admissions of 3 tenants each exist on exactly one cluster, no cluster holds more than its capacity, and each tenant is charged what its admissions hold', async () => {
    const byTenant = new Map<string, string[]>([['mc-a', []], ['mc-b', []], ['mc-c', []]]);
    const order = ['mc-a', 'mc-b', 'mc-c', 'mc-a', 'mc-b', 'mc-c', 'mc-a', 'mc-b', 'mc-c', 'mc-a'];
    await Promise.all(order.map(async (t) => byTenant.get(t)!.push(await admit(t))));
    const placed = new Map<string, string>();
    for (const [t, ids] of byTenant) for (const b of await untilState(t, ids, 'ready')) placed.set(b.id as string, b.cluster as string);
    expect(placed.size).toBe(10);

    const onCluster = new Map<string, Map<string, string>>();
    for (const m of members) onCluster.set(m.cluster.name, await modelServicesOn(m));
    for (const [id, cluster] of placed) {
      const where = members.filter((m) => onCluster.get(m.cluster.name)!.has(id)).map((m) => m.cluster.name);
      expect(where, `admission ${id} placed on ${cluster}`).toEqual([cluster]);
    }
    for (const m of members) {
      const count = [...placed.values()].filter((c) => c === m.cluster.name).length;
      expect(count).toBeLessThanOrEqual(CAPACITY.modelservices);
      expect(await reservedOf(m.cluster.name)).toBe(count);
    }
    for (const [t, ids] of byTenant) {
      // The tenant's charge is exactly its admissions': one ModelService each.
      expect(await ledger.count("SELECT COALESCE(SUM(used), 0) FROM tenant_quota WHERE tenant = ? AND resource = 'modelservices'", [t])).toBe(ids.length);
    }
    await untilConsistent();

    for (const [t, ids] of byTenant) await release(t, ids);
    await untilConsistent();
    for (const m of members) {
      expect(await reservedOf(m.cluster.name)).toBe(0);
      expect([...(await modelServicesOn(m)).keys()].filter((id) => placed.has(id))).toEqual([]);
    }
  });

  it('A2: with c1 full the next admission lands on c2, and a watch on c1 never sees an object of it', async () => {
    const [c1, c2] = members;
    const full: string[] = [];
    for (let i = 0; i < CAPACITY.modelservices; i++) full.push(await admit(AFFINE));
    const firsts = await untilState(AFFINE, full, 'ready');
    expect(firsts.map((b) => b.cluster)).toEqual(full.map(() => 'c1'));

    // Every ModelService event on c1 from now on (every namespace, as the informers watch).
    const seen: string[] = [];
    let ended: unknown = null;
    const kc = new KubeConfig();
    kc.loadFromFile(c1!.cluster.kubeconfig);
    const watch = await new Watch(kc).watch(
      MS_PATH,
      {},
      (type: string, obj: { metadata?: { labels?: Record<string, string> } }) => seen.push(`${type}:${obj.metadata?.labels?.[LABELS.admissionId] ?? '?'}`),
      (err: unknown) => (ended = err ?? 'ended'),
    );
    try {
      const next = await admit(AFFINE);
      const [placed] = await untilState(AFFINE, [next], 'ready');
      expect(placed!.cluster).toBe('c2');
      expect((await modelServicesOn(c2!)).has(next)).toBe(true);
      await release(AFFINE, [next]);
      // The control: the watch was open all along, and it does see c1's own admissions leave.
      await release(AFFINE, full);
      await waitFor("the watch to see c1's ModelServices deleted", async () => full.every((id) => seen.includes(`DELETED:${id}`)) || undefined);
      expect(ended, 'the watch on c1 ended early').toBeNull();
      expect(seen.filter((e) => e.endsWith(`:${next}`)), 'an event of the c2 admission on c1').toEqual([]);
    } finally {
      watch.abort();
    }
    await untilConsistent();
  });
});
