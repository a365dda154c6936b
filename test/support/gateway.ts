// The inference gateway as shipped (k8s/gateway), in a test install: on the stack's real node (the
// operator's placement patch), with its credential keys in the Secret the Deployment mounts, and the
// Worker pointed at the gateway Service's ClusterIP (the host routes the Service range into the
// node's network namespace, scripts/testenv/node-net.ts). Its /metrics port admits the host too (a
// patch of its NetworkPolicy), so a test reads what the gateway saw.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { inject } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import type { CredentialKey } from '../../schema/gateway-credential.ts';
import { NODE_NET, REAL_NODE_PLACEMENT } from '../../scripts/testenv/node-config.ts';
import { adminClient, GATEWAY_SA, installEnv, installGatewayNamespace, mintToken, tokenKubeconfig } from '../../scripts/testenv/install.ts';
import { freePort } from '../../scripts/testenv/net.ts';
import { startProcess, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import type { InstallPatches } from './install.ts';
import { kubeClients } from './kube.ts';
import { waitFor } from './wait.ts';

export const GATEWAY_PORT = 8080;
export const GATEWAY_METRICS_PORT = 9090;

export interface RealNodeGateway {
  key: CredentialKey;
  /** http://<ClusterIP>:8080 */
  url: string;
  /** http://<pod IP>:9090/metrics of the (one) gateway pod. */
  metricsUrl: string;
  /** The Worker's vars for this gateway. */
  workerVars: Record<string, string>;
}

/** The install patches: the gateway on the real node; its metrics port open to the host's end of the veth. */
export function realNodeGatewayPatches(): InstallPatches {
  const placement = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'modeldock-gateway' },
    spec: {
      template: {
        spec: {
          nodeSelector: JSON.parse(REAL_NODE_PLACEMENT.POD_NODE_SELECTOR!) as unknown,
          tolerations: JSON.parse(REAL_NODE_PLACEMENT.POD_TOLERATIONS!) as unknown,
        },
      },
    },
  };
  const metricsFromHost = [{ op: 'add', path: '/spec/ingress/1/from/-', value: { ipBlock: { cidr: `${NODE_NET.hostIp}/32` } } }];
  return {
    gateway: {
      'gateway-placement.json': { target: '{kind: Deployment, name: modeldock-gateway}', content: JSON.stringify(placement) },
      'gateway-metrics-from-host.json': { target: '{kind: NetworkPolicy, name: modeldock-gateway}', content: JSON.stringify(metricsFromHost) },
    },
  };
}

/** After the install into `namespace`: the keys Secret, the gateway pod Ready on the real node, its addresses. */
export async function startRealNodeGateway(namespace: string): Promise<RealNodeGateway> {
  const gwNs = installGatewayNamespace(namespace);
  const key: CredentialKey = { id: 'k1', secret: randomBytes(32).toString('hex') };
  await adminClient(inject('stack').kubeconfig).create(`${paths.namespace(gwNs)}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'modeldock-gateway-keys' },
    type: 'Opaque',
    stringData: { [key.id]: key.secret },
  });
  const { core } = kubeClients();
  const pod = await waitFor('the gateway pod Ready', async () => {
    const pods = await core.listNamespacedPod({ namespace: gwNs, labelSelector: 'app.kubernetes.io/name=modeldock-gateway' });
    return pods.items.find((p) => p.metadata?.deletionTimestamp === undefined && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  }, { timeoutMs: 180_000, intervalMs: 500 });
  const svc = await core.readNamespacedService({ name: 'modeldock-gateway', namespace: gwNs });
  const url = `http://${svc.spec!.clusterIP!}:${GATEWAY_PORT}`;
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
 * The gateway's code as a process on the host, as the install's gateway ServiceAccount (a minted
 * token), with other settings — e.g. BALANCE=round-robin as a baseline in the same test. It reaches
 * tenant pods from the host's end of the veth (the node tests' TENANT_INGRESS_CIDRS).
 */
export async function startHostGateway(namespace: string, key: CredentialKey, env: Record<string, string>): Promise<HostGateway> {
  const stack = inject('stack');
  const gwNs = installGatewayNamespace(namespace);
  const dir = join(stack.runDir, 'host-gateways', `${namespace}-${randomBytes(3).toString('hex')}`);
  mkdirSync(join(dir, 'keys'), { recursive: true });
  writeFileSync(join(dir, 'keys', key.id), key.secret, { mode: 0o600 });
  const token = await mintToken(adminClient(stack.kubeconfig), gwNs, GATEWAY_SA, 3600);
  writeFileSync(join(dir, 'kubeconfig'), tokenKubeconfig(stack.kubeconfig, `system:serviceaccount:${gwNs}:${GATEWAY_SA}`, token, gwNs), { mode: 0o600 });
  const [port, metricsPort] = [await freePort(), await freePort()];
  const proc = await startProcess(
    {
      name: `gateway-${basename(dir)}`,
      command: process.execPath,
      args: [join(repoRoot, 'gateway/main.ts')],
      cwd: repoRoot,
      logDir: stack.logDir,
      env: {
        KUBECONFIG: join(dir, 'kubeconfig'),
        INSTANCE: installEnv(namespace).INSTANCE,
        TENANT_NAMESPACE_PREFIX: installEnv(namespace).TENANT_NAMESPACE_PREFIX,
        CREDENTIAL_KEYS_DIR: join(dir, 'keys'),
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'debug',
        ...env,
      },
      ready: async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok,
      timeoutMs: 30_000,
    },
    stack.runDir,
  );
  return { url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, proc };
}
