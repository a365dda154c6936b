// The inference gateway in the local stack, for `npm run dev`, the node tests and B10: the shipped
// Deployment (k8s/gateway) placed on the real node by an operator's patch, its credential keys in
// the Secret it mounts, and the Worker's vars pointing at the gateway Service's ClusterIP (the host
// routes the Service range into the node's network namespace, node-net.ts). Or the gateway's code
// as a host process with other settings (a round-robin baseline), as the gateway's ServiceAccount.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CredentialKey } from '../../schema/gateway-credential.ts';
import { adminClient, GATEWAY_SA, mintToken, tokenKubeconfig, type OverlayPatches } from './install.ts';
import { freePort } from './net.ts';
import { NODE_NET, REAL_NODE_PLACEMENT } from './node-config.ts';
import { startProcess, type ManagedProcess } from './proc.ts';

export const GATEWAY_DEPLOYMENT = 'modeldock-gateway';
const GATEWAY_PORT = 8080;
const GATEWAY_METRICS_PORT = 9090;
const GATEWAY_KEYS_SECRET = 'modeldock-gateway-keys';

/** The gateway Deployment on the real node (the operator's placement), with `replicas` when given: a merge patch. */
export function gatewayPlacementPatch(replicas?: number): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: GATEWAY_DEPLOYMENT },
    spec: {
      ...(replicas === undefined ? {} : { replicas }),
      template: {
        spec: {
          nodeSelector: JSON.parse(REAL_NODE_PLACEMENT.POD_NODE_SELECTOR!) as unknown,
          tolerations: JSON.parse(REAL_NODE_PLACEMENT.POD_TOLERATIONS!) as unknown,
        },
      },
    },
  };
}

/**
 * A test install's gateway on the real node, its /metrics open to the host's end of the veth too
 * (a JSON 6902 patch of its NetworkPolicy), so a test or benchmark reads what it saw.
 */
export function realNodeGatewayPatches(): OverlayPatches {
  const metricsFromHost = [{ op: 'add', path: '/spec/ingress/1/from/-', value: { ipBlock: { cidr: `${NODE_NET.hostIp}/32` } } }];
  return {
    gateway: {
      'gateway-placement.json': { target: `{kind: Deployment, name: ${GATEWAY_DEPLOYMENT}}`, content: JSON.stringify(gatewayPlacementPatch()) },
      'gateway-metrics-from-host.json': { target: `{kind: NetworkPolicy, name: ${GATEWAY_DEPLOYMENT}}`, content: JSON.stringify(metricsFromHost) },
    },
  };
}

export interface NodeGateway {
  key: CredentialKey;
  /** http://<ClusterIP>:8080 */
  url: string;
  /** http://<pod IP>:9090/metrics of a Ready gateway pod. */
  metricsUrl: string;
  /** The Worker's vars for this gateway. */
  workerVars: Record<string, string>;
}

/** A fresh credential key (64 hex characters of randomness). */
const newCredentialKey = (id = 'k1'): CredentialKey => ({ id, secret: randomBytes(32).toString('hex') });

interface Pod {
  metadata: { deletionTimestamp?: string };
  status?: { podIP?: string; conditions?: Array<{ type: string; status: string }> };
}

/**
 * After the install into `namespace` (the gateway's): the keys Secret, then a gateway pod Ready
 * (within `timeoutMs`), and its addresses.
 */
export async function startNodeGateway(kubeconfig: string, namespace: string, timeoutMs = 180_000): Promise<NodeGateway> {
  const admin = adminClient(kubeconfig);
  const key = newCredentialKey();
  await admin.create(`/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: GATEWAY_KEYS_SECRET },
    type: 'Opaque',
    stringData: { [key.id]: key.secret },
  });
  const deadline = Date.now() + timeoutMs;
  let pod: Pod | undefined;
  while (!pod) {
    const pods = await admin.list<Pod>(`/api/v1/namespaces/${namespace}/pods`, { labelSelector: `app.kubernetes.io/name=${GATEWAY_DEPLOYMENT}` });
    pod = pods.items.find((p) => p.metadata.deletionTimestamp === undefined && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    if (pod) break;
    if (Date.now() > deadline) throw new Error(`no Ready gateway pod in ${namespace} after ${timeoutMs} ms: ${JSON.stringify(pods.items.map((p) => p.status))}`);
    await sleep(500);
  }
  const svc = await admin.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${namespace}/services/${GATEWAY_DEPLOYMENT}`);
  const url = `http://${svc.spec.clusterIP}:${GATEWAY_PORT}`;
  return {
    key,
    url,
    metricsUrl: `http://${pod.status!.podIP!}:${GATEWAY_METRICS_PORT}/metrics`,
    workerVars: { GATEWAY_URL: url, GATEWAY_CREDENTIAL_KEY: JSON.stringify(key) },
  };
}

export interface HostGateway {
  /** http://127.0.0.1:<port> (inference) */
  url: string;
  metricsUrl: string;
  proc: ManagedProcess;
}

/**
 * The gateway's code as a host process, as the ServiceAccount of the gateway in `namespace` (a
 * minted token), with `env` over its defaults (e.g. INSTANCE, TENANT_NAMESPACE_PREFIX, BALANCE). It
 * reaches tenant pods from the host's end of the veth (TENANT_INGRESS_CIDRS of the local stack).
 */
export async function startHostGateway(
  stack: { kubeconfig: string; runDir: string; logDir: string },
  o: { name: string; namespace: string; key: CredentialKey; env: Record<string, string> },
): Promise<HostGateway> {
  const dir = join(stack.runDir, 'host-gateways', o.name);
  mkdirSync(join(dir, 'keys'), { recursive: true });
  writeFileSync(join(dir, 'keys', o.key.id), o.key.secret, { mode: 0o600 });
  const token = await mintToken(adminClient(stack.kubeconfig), o.namespace, GATEWAY_SA, 3600);
  writeFileSync(join(dir, 'kubeconfig'), tokenKubeconfig(stack.kubeconfig, `system:serviceaccount:${o.namespace}:${GATEWAY_SA}`, token, o.namespace), { mode: 0o600 });
  const [port, metricsPort] = [await freePort(), await freePort()];
  const repoRoot = join(import.meta.dirname, '../..');
  const proc = await startProcess(
    {
      name: o.name,
      command: process.execPath,
      args: [join(repoRoot, 'gateway/main.ts')],
      cwd: repoRoot,
      logDir: stack.logDir,
      env: { KUBECONFIG: join(dir, 'kubeconfig'), CREDENTIAL_KEYS_DIR: join(dir, 'keys'), PORT: String(port), METRICS_PORT: String(metricsPort), ...o.env },
      ready: async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok,
      timeoutMs: 30_000,
    },
    stack.runDir,
  );
  return { url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, proc };
}
