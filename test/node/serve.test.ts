// The last mile on real containers: an admission runs the mock model on the stack's real node
// (kubelet + containerd), the tenant's stream answers through the pod IP and through the
// Service's ClusterIP (kube-proxy), and the pod's two slots and queue are the real process's.
// The startup timeline's five moments come from the real node, in order.
import { describe, expect, it } from 'vitest';
import { parsePrometheus } from '../../schema/prom-text.ts';
import { onRealNode, podsOf, mockAdmission, useNodeSystem } from '../support/real-node.ts';
import { readOpenAiStream } from '../support/sse-client.ts';
import { kubeClients } from '../support/kube.ts';
import { waitFor } from '../support/wait.ts';

const system = useNodeSystem();

/** Starts a streamed chat completion; resolves once the response headers arrived. */
async function chat(base: string, content: string, maxTokens: number): Promise<Response> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content }], stream: true, max_tokens: maxTokens }),
    signal: AbortSignal.timeout(60_000),
  });
  expect(res.status, await (res.ok ? Promise.resolve('') : res.text())).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return res;
}

const gauge = (text: string, name: string) => parsePrometheus(text).find((s) => s.name === name)?.value;

describe('a model on the real node', () => {
  it('admission → ready on a real pod; a stream through the pod IP and the ClusterIP; 4 streams: 2 run, 2 queue', async () => {
    // 400 ms per token: four streams of 20 tokens overlap for seconds, long enough to read /metrics.
    const [id] = await system().admit(1, mockAdmission({ name: 'chat', env: [{ name: 'TOKEN_DELAY_MS', value: '400' }] }));
    await system().untilState([id!], 'ready', 120_000);
    const pods = await podsOf(system().tenantNamespace, id!);
    expect(onRealNode(pods), JSON.stringify(pods.map((p) => p.spec?.nodeName))).toBe(true);
    const podIp = pods[0]!.status!.podIP!;
    expect(podIp).toMatch(/^10\.244\.0\./);
    const { core } = kubeClients();
    const crName = `md-${id!.toLowerCase()}`;
    const svc = await core.readNamespacedService({ name: crName, namespace: system().tenantNamespace });
    const clusterIp = svc.spec!.clusterIP!;
    expect(clusterIp).toMatch(/^10\.0\./);

    for (const base of [`http://${podIp}:8000`, `http://${clusterIp}:8000`]) {
      const s = await readOpenAiStream((await chat(base, `hello from ${base}`, 3)).body!);
      expect(s.done, base).toBe(true);
      expect(s.text.split(' ').filter(Boolean).length, base).toBeGreaterThan(0);
    }

    // Not awaited yet: a queued request gets its response headers only when a slot takes it.
    const streams = [1, 2, 3, 4].map((i) => chat(`http://${clusterIp}:8000`, `stream ${i}`, 20));
    const metrics = await waitFor('2 slots busy and 2 queued on the pod', async () => {
      const text = await (await fetch(`http://${podIp}:8000/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      return gauge(text, 'modeldock_mock_slots_busy') === 2 && gauge(text, 'modeldock_mock_queue_depth') === 2 ? text : undefined;
    }, { timeoutMs: 6_000, intervalMs: 100 });
    expect(gauge(metrics, 'modeldock_mock_slots')).toBe(2);
    const done = await Promise.all(streams.map(async (r) => readOpenAiStream((await r).body!)));
    expect(done.map((d) => d.done)).toEqual([true, true, true, true]);
  }, 240_000);

  it('the timeline: admitted ≤ delivered ≤ scheduled ≤ started ≤ ready, each from the real node', async () => {
    const [id] = await system().admit(1, mockAdmission({ name: 'timeline' }));
    await system().untilState([id!], 'ready', 120_000);
    const { body } = await system().api(`/requests/${id!}`);
    const t = body.timeline as Record<string, string | null> & { sinceAdmissionMs: Record<string, number | null> };
    const at = ['admittedAt', 'deliveredAt', 'scheduledAt', 'startedAt', 'readyAt'].map((k) => t[k]);
    expect(at.every((v) => typeof v === 'string'), JSON.stringify(t)).toBe(true);
    const ms = at.map((v) => Date.parse(v!));
    // scheduled and started have second precision (Kubernetes' times): compare them at that precision.
    const sec = (x: number) => Math.floor(x / 1000);
    for (let i = 1; i < ms.length; i++) expect(sec(ms[i]!), `${at[i - 1]} ≤ ${at[i]}`).toBeGreaterThanOrEqual(sec(ms[i - 1]!));
    // The container's start and the pod's readiness are the real kubelet's: started is the
    // container's startedAt, and ready comes after the mock's 1 s warm-up (/readyz answers 503
    // until then), so it is later than started.
    const pods = await podsOf(system().tenantNamespace, id!);
    const started = pods[0]!.status!.containerStatuses![0]!.state!.running!.startedAt!;
    expect(Date.parse(t.startedAt!)).toBe(new Date(started).getTime());
    expect(ms[4]!).toBeGreaterThan(Date.parse(t.startedAt!));
    console.log(`timeline (ms since admission): ${JSON.stringify(t.sinceAdmissionMs)}`);
  }, 180_000);
});
