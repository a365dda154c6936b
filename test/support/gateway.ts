// The inference gateway as shipped (k8s/gateway), in a test install: on the stack's real node (the
// operator's placement patch), with its credential keys in the Secret the Deployment mounts, and the
// Worker pointed at the gateway Service's ClusterIP (the host routes the Service range into the
// node's network namespace, scripts/testenv/node-net.ts). Its /metrics port admits the host too (a
// patch of its NetworkPolicy), so a test reads what the gateway saw.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import type { CredentialKey } from '../../schema/gateway-credential.ts';
import { NODE_NET, REAL_NODE_PLACEMENT } from '../../scripts/testenv/node-config.ts';
import { adminClient, installGatewayNamespace } from '../../scripts/testenv/install.ts';
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
