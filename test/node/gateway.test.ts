// The tenant reaches its model (issue 34's acceptance, on the real node): the official `openai` SDK
// through the edge (the Worker in workerd) and the in-cluster gateway (k8s/gateway, a pod on the
// real node) to the mock model's pods; the pods' own /metrics say where each request ran.
import OpenAI, { AuthenticationError, NotFoundError, RateLimitError } from 'openai';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { claimsFor, CREDENTIAL_HEADER, signCredential } from '../../schema/gateway-credential.ts';
import { startHostGateway, type HostGateway } from '../../scripts/testenv/gateway.ts';
import { installEnv, installGatewayNamespace } from '../../scripts/testenv/install.ts';
import { parsePrometheus } from '../../schema/prom-text.ts';
import { mockAdmission, onRealNode, podsOf, useNodeSystem } from '../support/real-node.ts';
import { readOpenAiStream, readSse } from '../support/sse-client.ts';
import { TENANT, TENANT_KEY } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';
import { startWorker } from '../support/worker.ts';

const OTHER = 'globex';
const OTHER_KEY = 'globex-e2e-key-0123456789abcdef';
const system = useNodeSystem({ gateway: true, keys: { [OTHER]: OTHER_KEY }, quota: ['cpu=4', 'memory=8Gi', 'modelservices=50'] });
const hostGateways: HostGateway[] = [];
afterAll(async () => {
  await Promise.all(hostGateways.map((g) => g.proc.stop()));
});

/** 50 ms per token: a stream of 100 tokens runs 5 s, long enough to read every pod's /metrics. */
const TOKEN_DELAY = { name: 'TOKEN_DELAY_MS', value: '50' };
const gauge = (text: string, name: string) => parsePrometheus(text).find((s) => s.name === name)?.value;

interface PodLoad {
  busy: number;
  queued: number;
}
/** Each pod's busy slots and queue, from its own /metrics (the host reaches pods: TENANT_INGRESS_CIDRS). */
async function loads(ips: string[]): Promise<PodLoad[]> {
  return Promise.all(
    ips.map(async (ip) => {
      const text = await (await fetch(`http://${ip}:8000/metrics`, { signal: AbortSignal.timeout(3000) })).text();
      return { busy: gauge(text, 'modeldock_mock_slots_busy') ?? NaN, queued: gauge(text, 'modeldock_mock_queue_depth') ?? NaN };
    }),
  );
}

/** A streamed chat completion of `tokens` tokens to `url` (…/chat/completions); resolves once its headers arrived. */
async function stream(url: string, headers: Record<string, string>, tokens: number, signal?: AbortSignal): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: `tell me ${tokens} words` }], stream: true, max_tokens: tokens }),
    signal: signal ?? AbortSignal.timeout(120_000),
  });
  expect(res.status, res.ok ? '' : await res.text()).toBe(200);
  return res;
}

/** A ready admission of the mock model with `replicas` pods on the real node; its id, endpoint and pod IPs. */
async function readyModel(name: string, replicas: number): Promise<{ id: string; endpoint: string; ips: string[] }> {
  const [id] = await system().admit(1, mockAdmission({ name, replicas, env: [TOKEN_DELAY] }));
  const [body] = await system().untilState([id!], 'ready', 180_000);
  await waitFor(`${replicas} pods Ready`, async () => (await podsOf(system().tenantNamespace, id!)).filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === replicas, { timeoutMs: 120_000 });
  const pods = await podsOf(system().tenantNamespace, id!);
  expect(onRealNode(pods)).toBe(true);
  return { id: id!, endpoint: body!.endpoint as string, ips: pods.map((p) => p.status!.podIP!) };
}

const idle = (ls: PodLoad[]) => ls.every((l) => l.busy === 0 && l.queued === 0);

describe('the tenant reaches its model through the edge and the gateway', () => {
  it('the openai SDK streams a chat completion; /v1/models lists it; another tenant 404, no key 401, over the rate limit 429', async () => {
    const model = await readyModel('chat', 1);
    expect(model.endpoint).toBe(`${system().worker.url}/v1/models/${model.id}`);

    // Ready means the gateway routes to it: the first call after `ready` streams.
    const client = new OpenAI({ baseURL: model.endpoint, apiKey: TENANT_KEY, maxRetries: 0, timeout: 60_000 });
    const chunks: string[] = [];
    for await (const c of await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hello' }], stream: true, max_tokens: 8 })) {
      const delta = c.choices[0]?.delta?.content;
      if (delta) chunks.push(delta);
    }
    expect(chunks).toHaveLength(8);

    const listed = await new OpenAI({ baseURL: `${system().worker.url}/v1`, apiKey: TENANT_KEY, maxRetries: 0 }).models.list();
    expect(listed.data.map((m) => m.id)).toContain(model.id);
    const theirs = await new OpenAI({ baseURL: `${system().worker.url}/v1`, apiKey: OTHER_KEY, maxRetries: 0 }).models.list();
    expect(theirs.data).toEqual([]);

    const other = new OpenAI({ baseURL: model.endpoint, apiKey: OTHER_KEY, maxRetries: 0 });
    await expect(other.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 })).rejects.toBeInstanceOf(NotFoundError);
    const wrongKey = new OpenAI({ baseURL: model.endpoint, apiKey: 'not-a-key-0123456789abcdef', maxRetries: 0 });
    await expect(wrongKey.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 })).rejects.toBeInstanceOf(AuthenticationError);
    const anonymous = await fetch(`${model.endpoint}/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);

    // The tenant limit of a Worker whose limit is 2 per period. A window is 10 s aligned to the
    // clock (test/integration/rate-limit.test.ts), so calls one after another may straddle two: a
    // burst of 3 × the limit meets at most two windows, so at least 2 are refused and at most 4 pass.
    const limited = await startWorker({ databaseUrl: system().ledger.url, keys: { [TENANT]: TENANT_KEY }, vars: system().gateway!.workerVars, rateLimits: { tenant: 2 } });
    try {
      const sdk = new OpenAI({ baseURL: `${limited.url}/v1/models/${model.id}`, apiKey: TENANT_KEY, maxRetries: 0 });
      const once = () => sdk.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
      const answers = await Promise.allSettled(Array.from({ length: 6 }, once));
      const refused = answers.flatMap((a) => (a.status === 'rejected' ? [a.reason as unknown] : []));
      expect(refused.length).toBeGreaterThanOrEqual(2);
      for (const err of refused) {
        expect(err).toBeInstanceOf(RateLimitError);
        expect((err as RateLimitError).code).toBe('rate_limited');
      }
    } finally {
      await limited.stop();
    }
  }, 300_000);

  it('routing by load: 4 streams over 2 pods of 2 slots run 2 and 2; with one pod busy the gateway avoids it, a round-robin gateway queues on it', async () => {
    const model = await readyModel('balanced', 2);
    const edge = { Authorization: `Bearer ${TENANT_KEY}` };
    const url = `${model.endpoint}/chat/completions`;

    const four = await Promise.all([1, 2, 3, 4].map(() => stream(url, edge, 100)));
    const spread = await waitFor('4 streams running', async () => {
      const ls = await loads(model.ips);
      return ls.reduce((n, l) => n + l.busy, 0) === 4 ? ls : undefined;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    expect(spread).toEqual([{ busy: 2, queued: 0 }, { busy: 2, queued: 0 }]);
    expect((await Promise.all(four.map((r) => readOpenAiStream(r.body!)))).every((s) => s.done)).toBe(true);
    await waitFor('both pods idle', async () => idle(await loads(model.ips)), { timeoutMs: 10_000 });

    // Pod A busy with 2 streams of its own (straight to its IP), then 2 through the gateway.
    const [a, b] = model.ips as [string, string];
    const busyA = async () => {
      const direct = await Promise.all([1, 2].map(() => stream(`http://${a}:8000/v1/chat/completions`, {}, 100)));
      await waitFor('pod A busy', async () => (await loads([a]))[0]!.busy === 2, { timeoutMs: 10_000, intervalMs: 100 });
      return direct;
    };
    const gatewayLoad = (gw: string, ip: string) => waitFor(`the gateway sees pod ${ip} at load 2`, async () => {
      const text = await (await fetch(gw, { signal: AbortSignal.timeout(3000) })).text();
      return parsePrometheus(text).some((s) => s.name === 'modeldock_gateway_endpoint_load' && s.labels.address === ip && s.value === 2) || undefined;
    }, { timeoutMs: 10_000, intervalMs: 100 });

    let direct = await busyA();
    await gatewayLoad(system().gateway!.metricsUrl, a);
    let two = await Promise.all([1, 2].map(() => stream(url, edge, 40)));
    const byLoad = await loads([a, b]);
    expect(byLoad, 'least load: both to pod B').toEqual([{ busy: 2, queued: 0 }, { busy: 2, queued: 0 }]);
    await Promise.all([...direct, ...two].map((r) => readOpenAiStream(r.body!)));
    await waitFor('both pods idle', async () => idle(await loads(model.ips)), { timeoutMs: 15_000 });

    // The baseline, same pods, same situation: the same gateway code with BALANCE=round-robin.
    const ns = system().namespace;
    const { INSTANCE, TENANT_NAMESPACE_PREFIX } = installEnv(ns);
    const rr = await startHostGateway(inject('stack'), { name: `gateway-rr-${ns}`, namespace: installGatewayNamespace(ns), key: system().gateway!.key, env: { INSTANCE, TENANT_NAMESPACE_PREFIX, BALANCE: 'round-robin' } });
    hostGateways.push(rr);
    direct = await busyA();
    await gatewayLoad(rr.metricsUrl, a);
    const credential = async () => ({ [CREDENTIAL_HEADER]: await signCredential(system().gateway!.key, claimsFor({ tenant: TENANT, admission: model.id, requestId: `rr-${Date.now()}`, nowMs: Date.now() })) });
    // A queued request gets its headers only when a slot takes it: start both, read the pods, then await.
    const pending = [1, 2].map(async () => stream(`${rr.url}/v1/chat/completions`, await credential(), 40));
    const byRoundRobin = await waitFor('the round-robin pair placed', async () => {
      const ls = await loads([a, b]);
      return ls[0]!.queued + ls[1]!.busy === 2 ? ls : undefined;
    }, { timeoutMs: 10_000, intervalMs: 100 });
    console.log(`pod A / pod B with A busy — least load: ${JSON.stringify(byLoad)}; round robin: ${JSON.stringify(byRoundRobin)}`);
    expect(byRoundRobin, 'round robin: one to the busy pod A, where it queues').toEqual([{ busy: 2, queued: 1 }, { busy: 1, queued: 0 }]);
    two = await Promise.all(pending);
    await Promise.all([...direct, ...two].map((r) => readOpenAiStream(r.body!)));
  }, 300_000);

  it('a client that disconnects mid-stream frees its slot within 1 s', async () => {
    const model = await readyModel('disconnect', 1);
    const abort = new AbortController();
    const res = await stream(`${model.endpoint}/chat/completions`, { Authorization: `Bearer ${TENANT_KEY}` }, 200, abort.signal);
    const events = readSse(res.body!);
    expect((await events.next()).done).toBe(false); // the first token arrived
    expect((await loads(model.ips))[0]!.busy).toBe(1);
    const t0 = Date.now();
    abort.abort();
    await waitFor('the slot free', async () => (await loads(model.ips))[0]!.busy === 0, { timeoutMs: 1000, intervalMs: 25 });
    console.log(`slot freed ${Date.now() - t0} ms after the client disconnected`);
  }, 240_000);

  it('DELETE during a stream: new requests refused at once, the stream ends cleanly, the release after the pods are gone', async () => {
    const model = await readyModel('deleted', 1);
    const edge = { Authorization: `Bearer ${TENANT_KEY}` };
    // 120 tokens at 50 ms: 6 s, inside the mock's 10 s shutdown grace.
    const res = await stream(`${model.endpoint}/chat/completions`, edge, 120);
    let ended = false;
    const reading = readOpenAiStream(res.body!).finally(() => {
      ended = true;
    });
    expect((await system().api(`/requests/${model.id}`, { method: 'DELETE' })).status).toBe(202);
    const refused = await fetch(`${model.endpoint}/chat/completions`, {
      method: 'POST',
      headers: { ...edge, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 }),
    });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('model_not_ready');

    // The pod is told to stop (Terminating) while the stream still runs, and the stream goes on to its end.
    const terminating = async () => {
      const ps = await podsOf(system().tenantNamespace, model.id);
      return (ps.length > 0 && ps.every((p) => p.metadata?.deletionTimestamp !== undefined)) || undefined;
    };
    await waitFor('the pod Terminating', terminating, { timeoutMs: 5_000, intervalMs: 100 });
    expect(ended, 'the stream still open when the pod began terminating').toBe(false);
    const done = await reading;
    expect(done.done, 'the stream ended with [DONE]').toBe(true);
    expect(done.chunks.filter((c) => (c.choices as Array<{ delta?: { content?: string } }>)[0]?.delta?.content).length).toBe(120);

    await system().untilState([model.id], 'released', 120_000);
    expect(await podsOf(system().tenantNamespace, model.id), 'no pod left at the release').toEqual([]);
  }, 240_000);
});
