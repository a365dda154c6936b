// What the `node` project's suites share: the whole system (test/support/system.ts) with its
// tenant pods placed on the stack's real node (the controller's operator placement settings), the
// mock model image as a tenant writes it, and reads of the real pods behind an admission.
import type { V1Pod } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { realNodeGatewayPatches, startNodeGateway, type NodeGateway } from '../../scripts/testenv/gateway.ts';
import { installGatewayNamespace } from '../../scripts/testenv/install.ts';
import { nodePaths, REAL_NODE, REAL_NODE_PLACEMENT, REAL_NODE_TENANT_NETWORK } from '../../scripts/testenv/node-config.ts';
import { kubeClients } from './kube.ts';
import { startSystem, type System } from './system.ts';

/** As a tenant writes it; containerd resolves docker.io names to the node's own registry only. */
export const MOCK_IMAGE = 'modeldock/mock-model:0.1.0';

export interface NodeSystemOptions {
  controllerEnv?: Record<string, string>;
  quota?: string[];
  /** The inference gateway too (k8s/gateway on the real node), with the Worker pointed at it. */
  gateway?: boolean;
  /** More tenants the Worker knows: tenant → key. */
  keys?: Record<string, string>;
}

/** The system with one leader-elected controller whose pods land on the real node (and the gateway's, when asked). */
export async function startNodeSystem(opts: NodeSystemOptions = {}): Promise<System & { gateway?: NodeGateway }> {
  let gateway: NodeGateway | undefined;
  const system = await startSystem({
    quota: opts.quota ?? ['cpu=4', 'memory=8Gi', 'modelservices=50'],
    keys: opts.keys,
    ...(opts.gateway
      ? {
          install: realNodeGatewayPatches(),
          beforeWorker: async (ns: string) => {
            gateway = await startNodeGateway(inject('stack').kubeconfig, installGatewayNamespace(ns));
            return gateway.workerVars;
          },
        }
      : {}),
  });
  await system.startController('controller-0', { ...REAL_NODE_PLACEMENT, ...REAL_NODE_TENANT_NETWORK, ...opts.controllerEnv });
  return Object.assign(system, { gateway });
}

/** The suite's system: started before its tests, stopped after them; the getter reads it inside a test. */
export function useNodeSystem(opts: NodeSystemOptions = {}): () => System & { gateway?: NodeGateway } {
  let system: (System & { gateway?: NodeGateway }) | undefined;
  beforeAll(async () => {
    system = await startNodeSystem(opts);
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
  });
  return () => {
    if (!system) throw new Error('the node system has not started (beforeAll failed)');
    return system;
  };
}

/** The pods of an admission (label modeldock.io/admission-id), Terminating ones included. */
export async function podsOf(namespace: string, admissionId: string): Promise<V1Pod[]> {
  const { core } = kubeClients();
  const list = await core.listNamespacedPod({ namespace, labelSelector: `modeldock.io/admission-id=${admissionId}` });
  return list.items;
}

/** Each pod runs on the real node, never on KWOK's. */
export function onRealNode(pods: V1Pod[]): boolean {
  return pods.length > 0 && pods.every((p) => p.spec?.nodeName === REAL_NODE);
}

/**
 * A small admission of the mock model: 1 replica, 250m / 256Mi (an eighth of the real node's
 * CPU), probed on the mock's /readyz (503 during its warm-up, or for good with MOCK_NEVER_READY).
 */
export function mockAdmission(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { image: MOCK_IMAGE, replicas: 1, resources: { cpu: '250m', memory: '256Mi' }, readinessPath: '/readyz', ...over };
}

/** The host PID of a container's main process, from the node's containerd. */
export async function containerPid(containerId: string): Promise<number> {
  const stack = inject('stack');
  const sock = nodePaths(join(stack.runDir, 'node')).containerdSock;
  const { stdout } = await promisify(execFile)(join(stack.binDir, 'ctr'), ['--address', sock, '--namespace', 'k8s.io', 'tasks', 'ls']);
  const line = stdout.split('\n').find((l) => l.startsWith(containerId));
  const pid = Number(line?.trim().split(/\s+/)[1]);
  expect(pid, `no task for container ${containerId} in:\n${stdout}`).toBeGreaterThan(1);
  return pid;
}

/** The environment the running process of a pod's first container sees, read from the host's /proc. */
export async function runningEnv(pod: V1Pod): Promise<Map<string, string>> {
  const containerId = pod.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '');
  expect(containerId, `pod ${pod.metadata?.name} has no running container`).toBeTruthy();
  const environ = readFileSync(`/proc/${await containerPid(containerId!)}/environ`, 'utf8');
  return new Map(environ.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}
