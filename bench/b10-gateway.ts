// B10 — what the edge and the gateway cost a tenant's stream. One mock model pod on the real node
// (its default 20 ms per token), reached three ways in the same run, alternated request by request:
// the baseline straight to the pod IP; through the edge — the Worker (key check, the admission read
// from the ledger, the credential) served by workerd alone as at the edge (lib/workerd-worker.ts)
// — and the in-cluster gateway (credential check, pick, proxy); and, shown but not judged, the
// gateway alone (a credential signed here, to its ClusterIP: what the edge adds is the
// difference) and the edge through `wrangler dev` (its Node proxy in front of workerd: what the
// tests use). One request at a time, so no stream waits for a slot. Per request: time to first
// token (request sent → first content chunk) and tokens/s (content chunks after the first over the
// time they took). Goal: TTFT p50 through the edge ≤ 1.1 × direct + 5 ms; tokens/s ≈ 1.
import { installGatewayNamespace } from '../scripts/testenv/install.ts';
import { realNodeGatewayPatches, startNodeGateway } from '../scripts/testenv/gateway.ts';
import { REAL_NODE_PLACEMENT, REAL_NODE_TENANT_NETWORK } from '../scripts/testenv/node-config.ts';
import { claimsFor, CREDENTIAL_HEADER, signCredential } from '../schema/gateway-credential.ts';
import { tenantNamespace } from '../schema/tenant-namespace.ts';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Benchmark } from './lib/benchmark.ts';
import { startDirectWorker } from './lib/workerd-worker.ts';
import { fmt, median, percentile, ratio } from './lib/stats.ts';
import { readSse } from '../test/support/sse-client.ts';

const TENANT = 'b10';
const KEY = 'b10-bench-key-0123456789abcdef';
const TOKENS = 32;
const GOAL = { factor: 1.1, plusMs: 5 };

interface Sample {
  ttftMs: number;
  tokensPerSecond: number;
}

/** One streamed chat completion of TOKENS tokens; throws unless it streamed them all. */
async function measure(url: string, headers: Record<string, string>): Promise<Sample> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'bench' }], stream: true, max_tokens: TOKENS }),
    signal: AbortSignal.timeout(60_000),
  });
  if (res.status !== 200) throw new Error(`POST ${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const times: number[] = [];
  for await (const e of readSse(res.body!)) {
    if (e.data === '[DONE]') break;
    const chunk = JSON.parse(e.data) as { choices?: Array<{ delta?: { content?: string } }> };
    if (chunk.choices?.[0]?.delta?.content) times.push(performance.now());
  }
  if (times.length !== TOKENS) throw new Error(`${url}: ${times.length} tokens, not ${TOKENS}`);
  const first = times[0]!;
  return { ttftMs: first - t0, tokensPerSecond: (TOKENS - 1) / ((times.at(-1)! - first) / 1000) };
}

export const b10: Benchmark = {
  id: 'B10',
  title: 'inference through the edge and the gateway vs straight to the pod',
  alone: { realNode: true },
  async run(ctx) {
    const rounds = ctx.quick ? 10 : 100;
    const ledger = await ctx.ledger();
    await ledger.setQuota(TENANT, 'cpu=2', 'memory=4Gi', 'modelservices=5');
    const ns = await ctx.namespace('b10', realNodeGatewayPatches());
    const gateway = await startNodeGateway(ctx.stack.kubeconfig, installGatewayNamespace(ns.name));
    await ctx.controller('b10-controller', ns, { DATABASE_URL: ledger.url, ...REAL_NODE_PLACEMENT, ...REAL_NODE_TENANT_NETWORK });
    const worker = await ctx.worker(ledger.url, { [TENANT]: KEY }, gateway.workerVars);
    const edgeWorker = await startDirectWorker({
      dir: join(ctx.stack.runDir, 'b10-worker'),
      logFile: join(ctx.stack.logDir, 'b10-worker-direct.log'),
      // As at the edge: wrangler.toml's MODELDOCK_ENV=production, so the key is given as its digest.
      vars: { DATABASE_URL: ledger.url, ADMISSION_KEYS_JSON: JSON.stringify({ [TENANT]: `sha256:${createHash('sha256').update(KEY).digest('hex')}` }), ALLOWED_IMAGE_REGISTRIES: '*', ...gateway.workerVars },
    });
    ctx.defer(() => edgeWorker.stop());
    const auth = { authorization: `Bearer ${KEY}` };

    const submitted = await fetch(`${worker.url}/requests`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'b10' },
      body: JSON.stringify({ name: 'b10', image: 'modeldock/mock-model:0.1.0', replicas: 1, resources: { cpu: '500m', memory: '256Mi' }, readinessPath: '/readyz' }),
    });
    const admission = (await submitted.json()) as { id: string; state: string; endpoint: string | null };
    if (submitted.status !== 201) throw new Error(`POST /requests answered ${submitted.status}: ${JSON.stringify(admission)}`);
    let ready = admission;
    for (const deadline = Date.now() + 180_000; ready.state !== 'ready'; ) {
      if (Date.now() > deadline) throw new Error(`admission ${admission.id} not ready after 180 s: ${JSON.stringify(ready)}`);
      await new Promise((r) => setTimeout(r, 500));
      ready = (await (await fetch(`${worker.url}/requests/${admission.id}`, { headers: auth })).json()) as typeof admission;
    }
    const pods = await ctx.admin.list<{ status?: { podIP?: string } }>(`/api/v1/namespaces/${tenantNamespace(TENANT, `${ns.name}-`)}/pods`, { labelSelector: `modeldock.io/admission-id=${admission.id}` });
    const podIp = pods.items[0]?.status?.podIP;
    if (!podIp) throw new Error(`no pod IP for ${admission.id}`);

    const credential = async () => ({ [CREDENTIAL_HEADER]: await signCredential(gateway.key, claimsFor({ tenant: TENANT, admission: admission.id, requestId: 'b10', nowMs: Date.now() })) });
    const paths = {
      direct: () => measure(`http://${podIp}:8000/v1/chat/completions`, {}),
      'gateway only': async () => measure(`${gateway.url}/v1/chat/completions`, await credential()),
      edge: () => measure(`${edgeWorker.url}/v1/models/${admission.id}/chat/completions`, auth),
      'wrangler dev': () => measure(`${ready.endpoint!}/chat/completions`, auth),
    };
    for (let i = 0; i < 3; i++) for (const p of Object.values(paths)) await p(); // warm-up: connections, JIT
    const names = Object.keys(paths) as Array<keyof typeof paths>;
    const samples = Object.fromEntries(names.map((k) => [k, [] as Sample[]])) as Record<keyof typeof paths, Sample[]>;
    for (let i = 0; i < rounds; i++) {
      const order = names.map((_, j) => names[(i + j) % names.length]!); // each path first in turn
      for (const k of order) samples[k].push(await paths[k]());
    }
    const ttft = (k: keyof typeof paths) => samples[k].map((s) => s.ttftMs);
    const tps = (k: keyof typeof paths) => samples[k].map((s) => s.tokensPerSecond);
    const [direct, edge] = [median(ttft('direct')), median(ttft('edge'))];
    const allowed = GOAL.factor * direct + GOAL.plusMs;
    const tpsRatio = ratio(median(tps('edge')), median(tps('direct')));
    const row = (k: keyof typeof paths) =>
      `| ${k} | ${fmt(median(ttft(k)))} | ${fmt(percentile(ttft(k), 90))} | ${fmt(median(tps(k)))} | ${fmt(percentile(tps(k), 10))} |`;
    return {
      summary: `ratio=${fmt(ratio(edge, direct))} (TTFT p50 through the edge ${fmt(edge)} ms vs direct ${fmt(direct)} ms; goal ≤ ${GOAL.factor}× + ${GOAL.plusMs} ms = ${fmt(allowed)} ms: ${edge <= allowed ? 'ok' : 'MISS'}; tokens/s ratio ${fmt(tpsRatio)}; gateway alone ${fmt(median(ttft('gateway only')))} ms, through wrangler dev ${fmt(median(ttft('wrangler dev')))} ms)`,
      details: [
        `One mock model pod (500m, 20 ms per token) on the real node; ${rounds} streamed chat completions of ${TOKENS} tokens each way, one at a time, alternated; 3 each way before as warm-up. Direct: the pod IP from the host. Gateway only: the gateway pod's ClusterIP with a credential signed by the benchmark. Edge: the Worker in workerd alone (key, ledger read through ps-http-sim beside the forward, credential) → the gateway pod (ClusterIP) → the pod. wrangler dev: the same Worker behind wrangler's dev proxy.`,
        '',
        '| path | TTFT p50 ms | TTFT p90 ms | tokens/s p50 | tokens/s p10 |',
        '|---|---|---|---|---|',
        ...names.map(row),
      ],
    };
  },
};
