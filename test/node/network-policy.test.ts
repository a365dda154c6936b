// NetworkPolicies enforced on the real node (kube-router's policy controller in the node's network
// namespace, scripts/testenv/node.ts): the policies of controller/tenant/network-policy.ts in two
// tenant namespaces, and real TCP connections out of tenant A's pod (its network namespace, entered
// from the host). Every target is first reached from tenant A BEFORE the policies exist, and a pod
// of a namespace without policies still reaches it afterwards, so a connection that fails with the
// policies is the policies' doing, not a broken network or a listener that is not there.
import type { V1Pod, V1Toleration } from '@kubernetes/client-node';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tenantNamespaceObject } from '../../controller/tenant/namespace.ts';
import { tenantNetworkPolicies, type NetworkPolicy, type TenantNetworkSettings } from '../../controller/tenant/network-policy.ts';
import { NODE_NET, REAL_NODE_PLACEMENT } from '../../scripts/testenv/node-config.ts';
import { kubeClients } from '../support/kube.ts';
import { containerPid, MOCK_IMAGE, onRealNode } from '../support/real-node.ts';
import { isNotFoundError, waitFor } from '../support/wait.ts';

const exec = promisify(execFile);
const R = randomBytes(3).toString('hex');
// `bystander` is another pod in the gateway's namespace: not the gateway, so no tenant admits it;
// `neighbour` is another pod in the controller's namespace (`system`): not the controller, likewise.
const NS = {
  a: `np-tenant-a-${R}`,
  b: `np-tenant-b-${R}`,
  gateway: `np-gateway-${R}`,
  bystander: `np-gateway-${R}`,
  open: `np-open-${R}`,
  system: `np-system-${R}`,
  neighbour: `np-system-${R}`,
} as const;
type Role = keyof typeof NS;
/** As the controller labels a tenant namespace (controller/tenant/namespace.ts). */
const tenantNsLabels = (tenant: string) => tenantNamespaceObject('', tenant, undefined).metadata.labels!;
const NS_LABELS: Record<Role, Record<string, string>> = {
  a: tenantNsLabels(`np-a-${R}`),
  b: tenantNsLabels(`np-b-${R}`),
  gateway: { 'modeldock.io/gateway': 'true' },
  bystander: { 'modeldock.io/gateway': 'true' },
  open: {},
  system: {},
  neighbour: {},
};
const MODEL_PORT = 8000;
/** The stand-in for the controller's pod: its metrics listener, and the client that reads tenant pods' /metrics (the autoscaler). */
const METRICS_PORT = 8080;
/**
 * Addresses on the loopback link of the node's namespace (this kernel has no dummy links), each
 * with a listener: a cloud's metadata service and an allow-listed outside service (TEST-NET-1).
 */
const METADATA = { host: '169.254.169.254', port: 80 };
const ALLOWED = { host: '192.0.2.10', port: 80 };
/** A blocked connection is refused at once (kube-router REJECTs); the deadline only bounds a dropped one. */
const CONNECT_DEADLINE_MS = 2000;

/** The operator's settings as for the local stack: the host's end of the veth may connect in; the cluster's own ranges are denied. */
const SETTINGS: TenantNetworkSettings = {
  gatewayNamespaceLabels: { 'modeldock.io/gateway': 'true' },
  gatewayPodLabels: { app: 'np-gateway' },
  // The API server's own name label on every namespace, as the controller's default.
  controllerNamespaceLabels: { 'kubernetes.io/metadata.name': NS.system },
  controllerPodLabels: { app: 'np-system' },
  ingressCidrs: [`${NODE_NET.hostIp}/32`],
  egressAllow: ['0.0.0.0/0'],
  // pods, Services, and the veth's /30 (node addresses: the API server and the registry listen on its host end).
  egressDeny: [NODE_NET.podCidr, NODE_NET.serviceCidr, '10.243.255.0/30'],
};

/** A TCP connect from a network namespace (undefined: the host's): 'connected', or why not (ECONNREFUSED, timeout, …). */
const PROBE = `const [host, port, ms] = process.argv.slice(1);
const s = require('node:net').connect({ host, port: Number(port) });
const done = (r) => { console.log(r); s.destroy(); process.exit(0); };
setTimeout(() => done('timeout'), Number(ms));
s.on('connect', () => done('connected'));
s.on('error', (e) => done(e.code || e.message));`;

async function connect(netns: string | undefined, to: { host: string; port: number }): Promise<string> {
  const node = [process.execPath, '-e', PROBE, to.host, String(to.port), String(CONNECT_DEADLINE_MS)];
  const [cmd, ...args] = netns ? ['nsenter', `--net=${netns}`, '--', ...node] : node;
  const { stdout } = await exec(cmd!, args, { timeout: 15_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return stdout.trim();
}

/** Every target from one network namespace, side by side. */
async function connectAll(netns: string | undefined, targets: Record<string, { host: string; port: number }>): Promise<Record<string, string>> {
  const entries = await Promise.all(Object.entries(targets).map(async ([name, t]) => [name, await connect(netns, t)] as const));
  return Object.fromEntries(entries);
}
const every = (names: string[], outcome: string) => Object.fromEntries(names.map((n) => [n, outcome]));
/** 'connected' stays, every other outcome reads 'blocked' (the raw outcomes are printed). */
const verdicts = (r: Record<string, string>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === 'connected' ? 'connected' : 'blocked']));

const kubectl = (args: string[]) => exec(join(inject('stack').binDir, 'kubectl'), [`--kubeconfig=${inject('stack').kubeconfig}`, ...args], { timeout: 60_000 });

/**
 * Creates the objects as the JSON the module wrote (as the controller sends them), not through
 * @kubernetes/client-node's typed API: its serializer reads an ingress rule's `from` as `_from`
 * and drops a plain object's, which leaves a rule admitting every source. Answers the specs the
 * API server stored.
 */
async function applyAsIs(policies: NetworkPolicy[]): Promise<unknown[]> {
  const file = join(inject('stack').runDir, `network-policies-${policies[0]!.metadata.namespace}.json`);
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: policies }));
  await kubectl(['create', '-f', file]);
  const stored = JSON.parse((await kubectl(['get', '-n', policies[0]!.metadata.namespace!, 'networkpolicies', '-o', 'json'])).stdout) as { items: NetworkPolicy[] };
  return policies.map((p) => stored.items.find((s) => s.metadata.name === p.metadata.name)?.spec);
}

function podManifest(role: Role, port: number): V1Pod {
  const uid = 10001;
  return {
    metadata: { name: `np-${role}`, labels: { app: `np-${role}` } },
    spec: {
      nodeSelector: JSON.parse(REAL_NODE_PLACEMENT.POD_NODE_SELECTOR!) as Record<string, string>,
      tolerations: JSON.parse(REAL_NODE_PLACEMENT.POD_TOLERATIONS!) as V1Toleration[],
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 2,
      securityContext: { runAsNonRoot: true, runAsUser: uid, runAsGroup: uid, fsGroup: uid, seccompProfile: { type: 'RuntimeDefault' } },
      volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
      containers: [
        {
          name: 'model',
          image: MOCK_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          env: [{ name: 'PORT', value: String(port) }],
          ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
          resources: { requests: { cpu: '200m', memory: '192Mi' }, limits: { cpu: '200m', memory: '192Mi' } },
          readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 1 },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            runAsNonRoot: true,
            runAsUser: uid,
            runAsGroup: uid,
            seccompProfile: { type: 'RuntimeDefault' },
          },
        },
      ],
    },
  };
}

interface RunningPod {
  ip: string;
  /** The pod's network namespace, for nsenter. */
  netns: string;
}
const pods = {} as Record<Role, RunningPod>;
let stubListener: ChildProcess | undefined;
let nodeNetns = '';

const inNodeNetns = (cmd: string, args: string[]) => exec('nsenter', [`--net=${nodeNetns}`, '--', cmd, ...args], { timeout: 15_000 });

beforeAll(async () => {
  const stack = inject('stack');
  expect(stack.realNode, 'the node project runs with the real node').toBeDefined();
  nodeNetns = stack.realNode!.netns;
  const { core } = kubeClients();
  const roles = Object.keys(NS) as Role[];
  const namespaces = new Map(roles.map((role) => [NS[role], NS_LABELS[role]]));
  for (const [name, labels] of namespaces) await core.createNamespace({ body: { metadata: { name, labels } } });
  for (const role of roles) await core.createNamespacedPod({ namespace: NS[role], body: podManifest(role, role === 'system' ? METRICS_PORT : MODEL_PORT) });
  await Promise.all(
    roles.map(async (role) => {
      const pod = await waitFor(`pod np-${role} Ready`, async () => {
        const p = await core.readNamespacedPod({ name: `np-${role}`, namespace: NS[role] });
        return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
      }, { timeoutMs: 180_000, intervalMs: 500 });
      expect(onRealNode([pod])).toBe(true);
      const containerId = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
      pods[role] = { ip: pod.status!.podIP!, netns: `/proc/${await containerPid(containerId)}/ns/net` };
    }),
  );
  // The metadata address and the allow-listed one, in the node's namespace (never the host's).
  for (const a of [METADATA.host, ALLOWED.host]) await inNodeNetns('ip', ['addr', 'add', `${a}/32`, 'dev', 'lo']);
  const serve = `const http = require('node:http'); for (const h of process.argv.slice(1)) http.createServer((q, r) => r.end('stub')).listen(80, h);`;
  stubListener = spawn('nsenter', [`--net=${nodeNetns}`, '--', process.execPath, '-e', serve, METADATA.host, ALLOWED.host], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } });
  await waitFor('the stub listeners', async () => (await connect(nodeNetns, METADATA)) === 'connected' && (await connect(nodeNetns, ALLOWED)) === 'connected', { timeoutMs: 20_000 });
}, 300_000);

afterAll(async () => {
  if (stubListener?.pid) process.kill(stubListener.pid, 'SIGKILL');
  if (nodeNetns) for (const a of [METADATA.host, ALLOWED.host]) await inNodeNetns('ip', ['addr', 'del', `${a}/32`, 'dev', 'lo']).catch(() => undefined);
  const { core } = kubeClients();
  const namespaces = [...new Set(Object.values(NS))];
  await Promise.all(namespaces.map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
  for (const name of namespaces) {
    await waitFor(`namespace ${name} gone`, async () => {
      try {
        await core.readNamespace({ name });
        return undefined;
      } catch (err) {
        if (isNotFoundError(err)) return true;
        throw err;
      }
    }, { timeoutMs: 120_000, intervalMs: 500 });
  }
}, 180_000);

describe('NetworkPolicies on the real node', () => {
  it('a tenant pod reaches neither another tenant, the controller’s metrics, the API server nor the metadata address; the gateway, the controller (its /metrics reads) and the allow list still work', async () => {
    const stack = inject('stack');
    const { core } = kubeClients();
    const apiService = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    const apiEndpoint = new URL(stack.kubeServer);
    expect(apiEndpoint.hostname).toBe(NODE_NET.hostIp);
    const forbidden = {
      'tenant B pod': { host: pods.b.ip, port: MODEL_PORT },
      'controller metrics (stand-in pod)': { host: pods.system.ip, port: METRICS_PORT },
      'API server (kubernetes Service)': { host: apiService.spec!.clusterIP!, port: 443 },
      'API server (its endpoint)': { host: apiEndpoint.hostname, port: Number(apiEndpoint.port) },
      'metadata 169.254.169.254': METADATA,
    };
    const allowed = { 'allow-listed 192.0.2.10': ALLOWED };
    const targets = { ...forbidden, ...allowed };
    const names = Object.keys(targets);
    const toA = { host: pods.a.ip, port: MODEL_PORT };

    // Without policies, tenant A reaches everything, and anyone reaches tenant A.
    const before = await connectAll(pods.a.netns, targets);
    expect(before, 'from tenant A, before the policies').toEqual(every(names, 'connected'));
    expect(await connect(pods.open.netns, toA)).toBe('connected');
    expect(await connect(pods.b.netns, toA)).toBe('connected');
    expect(await connect(pods.bystander.netns, toA)).toBe('connected');
    expect(await connect(pods.neighbour.netns, toA)).toBe('connected');

    for (const ns of [NS.a, NS.b]) expect(await applyAsIs(tenantNetworkPolicies(ns, SETTINGS))).toEqual(tenantNetworkPolicies(ns, SETTINGS).map((p) => p.spec));
    // kube-router syncs on the policies' events; the first target to close says it has.
    const t0 = Date.now();
    await waitFor('tenant A cut off from the metadata address', async () => (await connect(pods.a.netns, METADATA)) !== 'connected', { timeoutMs: 60_000, intervalMs: 250 });
    console.log(`policies enforced ${Date.now() - t0} ms after they were created`);

    const after = await connectAll(pods.a.netns, targets);
    console.log(`from tenant A with the policies: ${JSON.stringify(after)}`);
    expect(verdicts(after), 'from tenant A, with the policies').toEqual({ ...every(Object.keys(forbidden), 'blocked'), ...every(Object.keys(allowed), 'connected') });

    // The same connections from a pod of a namespace without policies, now: the network and every
    // listener are there. Tenant B's pod admits only its gateway (its own policies): it is reached from there.
    const { 'tenant B pod': _b, ...outsideTenants } = forbidden;
    expect(await connectAll(pods.open.netns, outsideTenants), 'from a namespace without policies').toEqual(every(Object.keys(outsideTenants), 'connected'));
    const toB = { host: pods.b.ip, port: MODEL_PORT };
    expect(await connect(pods.gateway.netns, toB), 'gateway → tenant B').toBe('connected');

    // Into a tenant: from the gateway's pods, the controller's pods (its autoscaler reads /metrics)
    // and the ingress CIDR (the host's end of the veth) only.
    expect(await connect(pods.gateway.netns, toA), 'gateway → tenant A').toBe('connected');
    expect(await connect(pods.system.netns, toA), 'controller → tenant A').toBe('connected');
    expect(await connect(pods.system.netns, toB), 'controller → tenant B').toBe('connected');
    expect(await connect(undefined, toA), 'host (10.243.255.1) → tenant A').toBe('connected');
    const refused = {
      'open → tenant A': await connect(pods.open.netns, toA),
      'open → tenant B': await connect(pods.open.netns, toB),
      'tenant B → tenant A': await connect(pods.b.netns, toA),
      'another pod of the gateway’s namespace → tenant A': await connect(pods.bystander.netns, toA),
      'another pod of the controller’s namespace → tenant A': await connect(pods.neighbour.netns, toA),
    };
    expect(verdicts(refused)).toEqual(every(Object.keys(refused), 'blocked'));
  }, 240_000);
});
