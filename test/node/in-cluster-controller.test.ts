// The controller as shipped, in the cluster: k8s/ installed into a namespace (the overlay a test
// install makes, plus the operator's placement patch that puts the controller and the tenant pods
// on the real node), the database Secret, and the controller image pulled by the real kubelet. It
// authenticates with its mounted ServiceAccount token and in-cluster config (the `kubernetes`
// Service, kube-root-ca.crt), wins the Lease, delivers an admission to a running model and
// releases it; its /metrics is scraped over the pod network with a token.
import { readFileSync } from 'node:fs';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AUDIT_LOG } from '../../scripts/testenv/kube.ts';
import { NODE_NET, REAL_NODE_PLACEMENT, REAL_NODE_TENANT_NETWORK } from '../../scripts/testenv/node-config.ts';
import { applyKustomization, createDatabaseSecret, installTenantNamespace, writeNamespaceOverlay } from '../../scripts/testenv/install.ts';
import { startPsHttpSim } from '../../scripts/testenv/ps-http-sim.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { metricSum } from '../support/controller-process.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { mockAdmission, onRealNode, podsOf } from '../support/real-node.ts';
import { waitFor } from '../support/wait.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';
import type { ManagedProcess } from '../../scripts/testenv/proc.ts';

const TENANT = 'incluster';
const KEY = 'incluster-key-0123456789abcdef';
let ledger: LedgerDatabase;
let podSim: ManagedProcess;
let worker: WorkerInstance;
let ns: { name: string; remove(): Promise<void> };

/**
 * The operator's patch of the shipped Deployment (strategic merge: env entries by name): the
 * controller on the real node, and its tenant pods too (its placement settings), reachable from the
 * host's end of the node's veth (the tenant network settings).
 */
function placementPatch(): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'modeldock-controller' },
    spec: {
      template: {
        spec: {
          nodeSelector: JSON.parse(REAL_NODE_PLACEMENT.POD_NODE_SELECTOR!) as unknown,
          tolerations: JSON.parse(REAL_NODE_PLACEMENT.POD_TOLERATIONS!) as unknown,
          containers: [{ name: 'controller', env: Object.entries({ ...REAL_NODE_PLACEMENT, ...REAL_NODE_TENANT_NETWORK }).map(([name, value]) => ({ name, value })) }],
        },
      },
    },
  });
}

/**
 * The shipped controller NetworkPolicy admits /metrics from monitoring namespaces only; here the
 * scraper is the test on the host, outside the cluster (a JSON 6902 patch adds its address).
 */
function metricsFromHostPatch(): string {
  return JSON.stringify([{ op: 'add', path: '/spec/ingress/0/from/-', value: { ipBlock: { cidr: `${NODE_NET.hostIp}/32` } } }]);
}

beforeAll(async () => {
  const stack = inject('stack');
  const { core } = kubeClients();
  ledger = await createLedgerDatabase();
  await ledger.setQuota(TENANT, 'cpu=2', 'memory=4Gi', 'modelservices=10');
  // The pod reaches the ledger through a ps-http-sim on the host's end of the node's veth.
  const sim = await startPsHttpSim({ binary: join(stack.binDir, 'ps-http-sim'), mysql: stack.mysql, database: ledger.name, logDir: stack.logDir, runDir: stack.runDir, name: `ps-http-sim-pods-${ledger.name}`, host: NODE_NET.hostIp });
  podSim = sim.process;
  ns = await createNamespace(core, 'incluster');
  const dir = writeNamespaceOverlay(repoRoot, join(stack.runDir, 'installs', ns.name), ns.name, {
    system: {
      'placement.json': { target: '{kind: Deployment, name: modeldock-controller}', content: placementPatch() },
      'metrics-from-host.json': { target: '{kind: NetworkPolicy, name: modeldock-controller}', content: metricsFromHostPatch() },
    },
  });
  await createDatabaseSecret(stack, ns.name, sim.url);
  await applyKustomization(stack, dir);
  worker = await startWorker({ databaseUrl: ledger.url, keys: { [TENANT]: KEY } });
}, 300_000);

afterAll(async () => {
  await worker?.stop();
  await ns?.remove();
  await podSim?.stop();
  await ledger?.drop();
});

async function api(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await worker.fetch(path, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${KEY}`, ...(init.body ? { 'Content-Type': 'application/json', 'Idempotency-Key': init.key ?? 'k' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function untilState(id: string, state: string, timeoutMs: number): Promise<Record<string, unknown>> {
  return waitFor(`admission ${id} → ${state}`, async () => {
    const r = await api(`/requests/${id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.state === state ? r.body : undefined;
  }, { timeoutMs });
}

describe('the controller in-cluster, as shipped', () => {
  it('runs from its image on the real node with its ServiceAccount token, wins the Lease, delivers and releases; /metrics over the pod network', async () => {
    const stack = inject('stack');
    const { core, kc } = kubeClients();
    // The controller pod: pulled by the kubelet, Ready (its /readyz needs its informers synced and the database).
    const pod = await waitFor('the controller pod Ready on the real node', async () => {
      const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'app.kubernetes.io/name=modeldock-controller' });
      const p = pods.items[0];
      return p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
    }, { timeoutMs: 180_000, intervalMs: 1000 });
    expect(onRealNode([pod])).toBe(true);
    // In-cluster config: no kubeconfig anywhere in its spec; the token is the projected one.
    const c = pod.spec!.containers[0]!;
    expect((c.env ?? []).map((e) => e.name)).not.toContain('KUBECONFIG');
    expect(pod.spec!.serviceAccountName).toBe('modeldock-controller');
    expect((pod.spec!.volumes ?? []).some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken))).toBe(true);

    // It holds the Lease.
    const coordination = kc.makeApiClient(CoordinationV1Api);
    const lease = await waitFor('the Lease held by the pod', async () => {
      const l = await coordination.readNamespacedLease({ name: 'modeldock-controller', namespace: ns.name });
      return l.spec?.holderIdentity?.startsWith(`${pod.metadata!.name!}_`) ? l : undefined;
    }, { timeoutMs: 60_000 });
    expect(lease.spec?.holderIdentity).toContain(pod.metadata!.name!);

    // /metrics over the pod network: refused without a token, served with the scraper's.
    const metricsUrl = `http://${pod.status!.podIP!}:8080/metrics`;
    expect((await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) })).status).toBe(401);
    const res = await fetch(metricsUrl, { headers: { Authorization: `Bearer ${stack.metricsToken}` }, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    expect(res.status, text.slice(0, 200)).toBe(200);
    expect(metricSum(text, 'leader_election_master_status')).toBe(1);

    // It delivers an admission to a model running on the real node, and releases it.
    const post = await api('/requests', { method: 'POST', body: { name: 'chat', ...mockAdmission() }, key: 'in-cluster-1' });
    expect(post.status, JSON.stringify(post.body)).toBe(201);
    const id = post.body.id as string;
    await untilState(id, 'ready', 180_000);
    expect(onRealNode(await podsOf(installTenantNamespace(ns.name, TENANT), id))).toBe(true);
    expect((await api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await untilState(id, 'released', 120_000);
    expect(await ledger.count('SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ?', [id])).toBe(2);
    // It created the ModelService as its ServiceAccount, from the pod network (not from loopback).
    const user = `system:serviceaccount:${ns.name}:modeldock-controller`;
    const creates = readFileSync(join(stack.logDir, AUDIT_LOG), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { verb: string; user: { username: string }; objectRef?: { resource?: string; namespace?: string }; sourceIPs?: string[] })
      .filter((e) => e.verb === 'create' && e.user.username === user && e.objectRef?.resource === 'modelservices');
    expect(creates.length).toBeGreaterThan(0);
    expect(creates.every((e) => !(e.sourceIPs ?? []).includes('127.0.0.1'))).toBe(true);
  }, 600_000);
});
