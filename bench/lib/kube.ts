// Kubernetes helpers of the benchmarks: a watch that records when each object was first seen,
// extra KWOK nodes, a wait for a condition over a list, and kube-controller-manager's /metrics.
import { Watch } from '@kubernetes/client-node';
import { Agent, fetch as undiciFetch } from 'undici';
import type { KubeClient } from '../../controller/runtime/kube.ts';
import type { StackInfo } from '../../scripts/testenv/stack.ts';
import { adminKubeConfig } from './context.ts';
import { parsePrometheus } from '../../schema/prom-text.ts';
import { cmdline } from './proc-stats.ts';

export interface Seen {
  /** performance.now() when each name was first seen (ADDED), by name. */
  added: Map<string, number>;
  stop(): void;
}

/** Watches `path` from now on and records the first sighting of every object. */
export async function watchAdded(stack: StackInfo, path: string): Promise<Seen> {
  const added = new Map<string, number>();
  const watch = new Watch(adminKubeConfig(stack));
  const ctl = await watch.watch(
    path,
    {},
    (phase, obj: { metadata?: { name?: string } }) => {
      const name = obj.metadata?.name;
      if (name && !added.has(name) && (phase === 'ADDED' || phase === 'MODIFIED')) added.set(name, performance.now());
    },
    () => undefined,
  );
  return { added, stop: () => ctl.abort() };
}

/** Adds KWOK-managed fake nodes (500 pods each) until the cluster can hold `pods` pods. */
export async function ensurePodCapacity(admin: KubeClient, pods: number): Promise<void> {
  const nodes = await admin.list<{ status?: { capacity?: { pods?: string } } }>('/api/v1/nodes');
  const have = nodes.items.reduce((s, n) => s + Number(n.status?.capacity?.pods ?? 0), 0);
  const extra = Math.max(0, Math.ceil((pods - have) / 500));
  const capacity = { cpu: '512', memory: '4Ti', pods: '500', 'nvidia.com/gpu': '0', 'ephemeral-storage': '64Ti' };
  for (let i = 0; i < extra; i++) {
    const name = `kwok-bench-${nodes.items.length + i}`;
    await admin.create('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', type: 'kwok' }, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
      status: { capacity, allocatable: capacity },
    });
  }
  if (extra > 0) {
    await until(`${extra} extra KWOK node(s) Ready`, 60_000, async () => {
      const list = await admin.list<{ status?: { conditions?: Array<{ type: string; status: string }> } }>('/api/v1/nodes');
      return list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= nodes.items.length + extra;
    });
  }
}

/** Polls `check` every `everyMs` until true; throws after `timeoutMs`. */
export async function until(what: string, timeoutMs: number, check: () => Promise<boolean>, everyMs = 500): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** kube-controller-manager's /metrics (its secure port, read with the stack's admin token). */
export async function kcmMetrics(kcmPid: number, stack: StackInfo): Promise<string> {
  const port = cmdline(kcmPid).find((a) => a.startsWith('--secure-port='))?.split('=')[1];
  const token = adminKubeConfig(stack).getCurrentUser()?.token;
  const res = await undiciFetch(`https://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` }, dispatcher: insecure });
  const text = await res.text();
  if (!res.ok) throw new Error(`kube-controller-manager /metrics answered ${res.status}: ${text.slice(0, 200)}`);
  return text;
}

/** Sum of `name`'s samples whose labels pass `where`. */
export function metricSum(text: string, name: string, where: (l: Record<string, string>) => boolean = () => true): number {
  return parsePrometheus(text)
    .filter((s) => s.name === name && where(s.labels))
    .reduce((a, s) => a + s.value, 0);
}

/**
 * Waits until a controller's API writes other than Lease renewals have stopped for 6 s (Events
 * have their own, slower budget and may still be draining after the last object converged), at
 * most `maxMs`; returns the seconds waited.
 */
export async function untilWritesSettle(metrics: () => Promise<string>, maxMs: number): Promise<number> {
  const start = performance.now();
  const writes = async () => metricSum(await metrics(), 'modeldock_kube_writes_total', (l) => l.resource !== 'leases');
  let last = await writes();
  for (let still = 0; still < 3 && performance.now() - start < maxMs; ) {
    await new Promise((r) => setTimeout(r, 2_000));
    const now = await writes();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return (performance.now() - start) / 1000;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** kube-controller-manager's writes so far (its client's requests with a write method), from its /metrics text. */
export const kcmWrites = (text: string) => metricSum(text, 'rest_client_requests_total', (l) => WRITE_METHODS.has(l.method ?? ''));
