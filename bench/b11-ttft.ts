// B11 — time to first token on the real node (issue 32, point 5): from `POST /requests` to the
// first streamed token from the tenant's endpoint, against `kubectl apply` of the identical
// Deployment + Service to the first token, on the same node, in the same run.
//
// ModelDock: the Worker in workerd alone (lib/workerd-worker.ts), the shipped controller as its
// ServiceAccount, the gateway on the real node; t0 = the POST sent, then the tenant's honest
// experience: a small streamed chat completion through the edge (Worker → gateway → pod), sent
// again every RETRY_PAUSE_MS while it fails (409 model_not_ready, 503, …) until the first token.
// The admission's timeline (GET /requests/:id after the first token) gives the moments between;
// one pod watch (lib/pod-moments.ts) gives both paths' pod moments the same way, in milliseconds.
// Baseline: the Deployment and Service the ModelService controller builds (controller/modelservice/
// desired.ts, from the spec the admission stored and the operator placement of the real node,
// without the owner reference) created by the admin client — what `kubectl apply` does: two
// creates — into a plain namespace; then the same loop straight to the Service's ClusterIP
// (refused, then unanswered, until the pod is a Ready endpoint). Alternated sample by sample, each
// path's objects deleted and its pods gone before the next sample; a warm-up of each first (the
// image on the node, the JIT). Then a burst: N admissions POSTed at once vs N pairs applied at once.
// Goal: ModelDock p50 ≤ 1.3 × baseline p50 + the outbox poller's idle interval (2 s).
import { z } from 'zod';
import { installGatewayNamespace } from '../scripts/testenv/install.ts';
import { realNodeGatewayPatches, startNodeGateway } from '../scripts/testenv/gateway.ts';
import { REAL_NODE_PLACEMENT, REAL_NODE_TENANT_NETWORK } from '../scripts/testenv/node-config.ts';
import { desiredDeployment, desiredService } from '../controller/modelservice/desired.ts';
import { paths, type KubeClient } from '../controller/runtime/kube.ts';
import { crNameFor } from '../schema/admission.ts';
import { API_VERSION, KIND, LABELS, MANAGED_BY, modelServiceSpecSchema, type ModelService, type ModelServiceSpec } from '../schema/model-service.ts';
import { placementFrom, placementSettings, type Placement } from '../schema/placement.ts';
import { tenantNamespace } from '../schema/tenant-namespace.ts';
import { createHash, randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch as undiciFetch, type buildConnector } from 'undici';
import type { Benchmark } from './lib/benchmark.ts';
import { until } from './lib/kube.ts';
import { POD_MOMENTS, watchPodMoments, type PodMoments } from './lib/pod-moments.ts';
import { startDirectWorker } from './lib/workerd-worker.ts';
import { fmt, median, percentile, ratio, verdict } from './lib/stats.ts';
import { readSse } from '../test/support/sse-client.ts';

const TENANT = 'b11';
const KEY = 'b11-bench-key-0123456789abcdef';
const IMAGE = 'modeldock/mock-model:0.1.0';
/** The outbox poller's longest idle interval (controller/reservation/poller.ts maxIntervalMs): the goal allows it. */
const POLL_MS = 2_000;
const GOAL = { factor: 1.3, plusMs: POLL_MS };
const RETRY_PAUSE_MS = 100;
/**
 * A connection not made within this is given up and tried again, like a refused one: a SYN to a
 * ClusterIP whose endpoint is not programmed yet goes unanswered (seen: the connect then waits for
 * the kernel's SYN retransmit at 1, 3, 7 s), and a new connection is DNATed once it is. Loopback
 * and the node's veth connect in well under a millisecond; the same for both paths.
 */
const CONNECT_TIMEOUT_MS = 100;

/** undici's connector for plain http giving up after `ms` (undici's own connect timeout ticks in ≈ 1 s steps). */
function connectWithin(ms: number): buildConnector.connector {
  return ({ hostname, port }, callback) => {
    const socket = netConnect({ host: hostname, port: Number(port) || 80, noDelay: true });
    const onConnect = () => settle(null);
    const settle = (err: Error | null) => {
      clearTimeout(timer);
      socket.off('connect', onConnect).off('error', settle);
      if (!err) return callback(null, socket);
      socket.destroy();
      callback(err, null);
    };
    const timer = setTimeout(settle, ms, new Error(`connect to ${hostname}:${port} not made within ${ms} ms`));
    socket.once('connect', onConnect).once('error', settle);
  };
}
const DEADLINE_MS = 180_000;
/** One sample's pod (B10's); the burst's are smaller, so that N fit on the 2-core node beside the gateway. */
const SAMPLE_RESOURCES = { cpu: '500m', memory: '256Mi' };
const BURST_RESOURCES = { cpu: '150m', memory: '192Mi' };
/** The timeline's moments after admittedAt (docs/admission-api.md), named as the API names them. */
const TIMELINE = ['delivered', 'scheduled', 'started', 'ready'] as const;
/** Rows of the breakdown: ms since t0 of each, per path (absent where a path has no such moment). */
const ROWS = ['answered', 'admitted', ...TIMELINE, ...POD_MOMENTS, 'first token'] as const;
type Row = (typeof ROWS)[number];

interface Sample {
  ttftMs: number;
  attempts: number;
  at: Partial<Record<Row, number>>;
}

/** One small streamed chat completion; the ms since t0 of its first content chunk, or why it failed. */
async function tryFirstToken(dispatcher: Agent, url: string, headers: Record<string, string>, t0: number): Promise<number | string> {
  const res = await undiciFetch(url, {
    dispatcher,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'bench' }], stream: true, max_tokens: 4 }),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) return `${res.status} ${(await res.text()).slice(0, 200)}`;
  let first: number | undefined;
  for await (const e of readSse(res.body as ReadableStream<Uint8Array>)) {
    if (e.data === '[DONE]') break;
    const chunk = JSON.parse(e.data) as { choices?: Array<{ delta?: { content?: string } }> };
    if (first === undefined && chunk.choices?.[0]?.delta?.content) first = performance.now() - t0;
  }
  return first ?? 'a stream without a token';
}

/** Sends again every RETRY_PAUSE_MS until a stream's first token arrives: the tenant's wait. */
async function untilFirstToken(dispatcher: Agent, url: string, headers: Record<string, string>, t0: number): Promise<{ ms: number; attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    const r = await tryFirstToken(dispatcher, url, headers, t0).catch((err: unknown) => (err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)));
    if (typeof r === 'number') return { ms: r, attempts };
    if (performance.now() - t0 > DEADLINE_MS) throw new Error(`no token from ${url} after ${DEADLINE_MS / 1000} s and ${attempts} attempts; the last: ${r}`);
    await sleep(RETRY_PAUSE_MS);
  }
}

/** How a sample reaches its model (`dispatcher`: the connector above) and sees its pod's moments. */
interface Probe {
  dispatcher: Agent;
  pods: PodMoments;
}
interface Edge extends Probe {
  url: string;
  auth: Record<string, string>;
}
interface AdmissionDoc {
  id: string;
  state: string;
  spec: unknown;
  timeline?: { admittedAt: string; sinceAdmissionMs: Partial<Record<(typeof TIMELINE)[number], number | null>> };
}

/** POST /requests, then the first token through the edge; the moments from the admission's timeline. */
async function modelDockSample(edge: Edge, name: string, resources: object): Promise<Sample & { id: string; spec: ModelServiceSpec }> {
  const [t0Wall, t0] = [Date.now(), performance.now()];
  const res = await fetch(`${edge.url}/requests`, {
    method: 'POST',
    headers: { ...edge.auth, 'content-type': 'application/json', 'idempotency-key': `${name}-${t0Wall}` },
    body: JSON.stringify({ name, image: IMAGE, replicas: 1, resources, readinessPath: '/readyz' }),
  });
  const doc = (await res.json()) as AdmissionDoc;
  if (res.status !== 201) throw new Error(`POST /requests answered ${res.status}: ${JSON.stringify(doc)}`);
  const answered = performance.now() - t0;
  const first = await untilFirstToken(edge.dispatcher, `${edge.url}/v1/models/${doc.id}/chat/completions`, edge.auth, t0);
  const t = ((await (await fetch(`${edge.url}/requests/${doc.id}`, { headers: edge.auth })).json()) as AdmissionDoc).timeline;
  const at: Sample['at'] = { answered, 'first token': first.ms, ...sinceT0(edge.pods.of(crNameFor(doc.id)), t0) };
  if (t) {
    // sinceAdmissionMs never decreases (second-precision Kubernetes times count as the moment before).
    const admitted = Date.parse(t.admittedAt) - t0Wall;
    at.admitted = admitted;
    for (const m of TIMELINE) if (typeof t.sinceAdmissionMs[m] === 'number') at[m] = admitted + t.sinceAdmissionMs[m];
  }
  return { id: doc.id, spec: modelServiceSpecSchema.parse(doc.spec), ttftMs: first.ms, attempts: first.attempts, at };
}

/** DELETE /requests/:id of each, then until each is released and the tenant namespace has no pod. */
async function releaseAll(edge: Edge, admin: KubeClient, tenantNs: string, ids: string[]): Promise<void> {
  await Promise.all(
    ids.map(async (id) => {
      const res = await fetch(`${edge.url}/requests/${id}`, { method: 'DELETE', headers: edge.auth });
      if (res.status !== 202) throw new Error(`DELETE /requests/${id} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      await res.body?.cancel();
    }),
  );
  await until(`${ids.length} admission(s) released and their pods gone`, DEADLINE_MS, async () => {
    const docs = await Promise.all(ids.map(async (id) => (await (await fetch(`${edge.url}/requests/${id}`, { headers: edge.auth })).json()) as AdmissionDoc));
    return docs.every((d) => d.state === 'released') && (await admin.list(paths.pods(tenantNs))).items.length === 0;
  }, 250);
}

const sinceT0 = (m: Sample['at'], t0: number): Sample['at'] => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v - t0]));

interface Baseline extends Probe {
  admin: KubeClient;
  namespace: string;
  placement: Placement;
}

/** The baseline's two objects: what the ModelService controller would create for `spec`, owned by nothing. */
function baselineObjects(name: string, namespace: string, spec: ModelServiceSpec, placement: Placement) {
  const ms: ModelService = { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, spec };
  const unowned = <T extends { metadata: object }>(o: T): T => ({ ...o, metadata: { ...o.metadata, ownerReferences: undefined } });
  return { deployment: unowned(desiredDeployment(ms, spec, placement)), service: unowned(desiredService(ms, spec)) };
}

/** `kubectl apply` of the Deployment and the Service (two creates), then the first token through the ClusterIP. */
async function baselineSample(b: Baseline, name: string, spec: ModelServiceSpec): Promise<Sample> {
  const o = baselineObjects(name, b.namespace, spec, b.placement);
  const t0 = performance.now();
  await b.admin.create(paths.deployments(b.namespace), o.deployment);
  const svc = await b.admin.create<{ spec: { clusterIP: string } }>(paths.services(b.namespace), o.service);
  const answered = performance.now() - t0;
  const first = await untilFirstToken(b.dispatcher, `http://${svc.spec.clusterIP}:${spec.port}/v1/chat/completions`, {}, t0);
  return { ttftMs: first.ms, attempts: first.attempts, at: { answered, 'first token': first.ms, ...sinceT0(b.pods.of(name), t0) } };
}

async function deleteBaseline({ admin, namespace }: Baseline, names: string[]): Promise<void> {
  for (const n of names) {
    await admin.delete(`${paths.deployments(namespace)}/${n}`, { propagationPolicy: 'Background' });
    await admin.delete(`${paths.services(namespace)}/${n}`);
  }
  await until(`the baseline's pods gone`, DEADLINE_MS, async () => (await admin.list(paths.pods(namespace))).items.length === 0, 250);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const p50 = (s: Sample[], row: Row) => median(s.map((x) => x.at[row]).filter((v): v is number => v !== undefined));
const cell = (v: number) => (Number.isNaN(v) ? '—' : fmt(v));

export const b11: Benchmark = {
  id: 'B11',
  title: 'time to first token on the real node: POST /requests vs kubectl apply',
  alone: { realNode: true },
  async run(ctx) {
    const [rounds, burst] = ctx.quick ? [2, 3] : [5, 10];
    const ledger = await ctx.ledger();
    await ledger.setQuota(TENANT, 'cpu=8', 'memory=16Gi', 'modelservices=40');
    const ns = await ctx.namespace('b11', realNodeGatewayPatches());
    const gateway = await startNodeGateway(ctx.stack.kubeconfig, installGatewayNamespace(ns.name));
    await ctx.controller('b11-controller', ns, { DATABASE_URL: ledger.url, ...REAL_NODE_PLACEMENT, ...REAL_NODE_TENANT_NETWORK });
    const worker = await startDirectWorker({
      dir: join(ctx.stack.runDir, 'b11-worker'),
      logFile: join(ctx.stack.logDir, 'b11-worker-direct.log'),
      // As at the edge: wrangler.toml's MODELDOCK_ENV=production, so the key is given as its digest.
      vars: { DATABASE_URL: ledger.url, ADMISSION_KEYS_JSON: JSON.stringify({ [TENANT]: `sha256:${createHash('sha256').update(KEY).digest('hex')}` }), ALLOWED_IMAGE_REGISTRIES: '*', ...gateway.workerVars },
    });
    ctx.defer(() => worker.stop());
    const dispatcher = new Agent({ connect: connectWithin(CONNECT_TIMEOUT_MS) });
    ctx.defer(() => dispatcher.close());
    // Both paths' pods carry the controller's labels (the baseline's are built by the same code).
    const pods = await watchPodMoments(ctx.stack, `${LABELS.managedBy}=${MANAGED_BY}`);
    ctx.defer(async () => pods.stop());
    const edge: Edge = { url: worker.url, auth: { authorization: `Bearer ${KEY}` }, dispatcher, pods };
    const tenantNs = tenantNamespace(TENANT, `${ns.name}-`);
    const admin = ctx.admin;
    const base: Baseline = { admin, namespace: `b11-apply-${randomBytes(3).toString('hex')}`, placement: placementFrom(z.object(placementSettings).parse(REAL_NODE_PLACEMENT)), dispatcher, pods };
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: base.namespace } });
    ctx.defer(() => admin.delete(`/api/v1/namespaces/${base.namespace}`));

    const modelDock = async (name: string, resources: object) => {
      const s = await modelDockSample(edge, name, resources);
      await releaseAll(edge, admin, tenantNs, [s.id]);
      return s;
    };
    const apply = async (name: string, spec: ModelServiceSpec) => {
      const s = await baselineSample(base, name, spec);
      await deleteBaseline(base, [name]);
      return s;
    };
    // Warm-up, not counted: the image on the node, the JIT; the spec the baseline applies is the one this admission stored.
    const { spec } = await modelDock('warm-up', SAMPLE_RESOURCES);
    await apply('apply-warm-up', spec);

    const md: Sample[] = [];
    const bl: Sample[] = [];
    for (const i of range(rounds)) {
      const steps = [async () => md.push(await modelDock(`sample-${i}`, SAMPLE_RESOURCES)), async () => bl.push(await apply(`apply-${i}`, spec))];
      for (const step of i % 2 === 0 ? steps : steps.reverse()) await step(); // each path first in turn
      ctx.log(`B11 sample ${i + 1}/${rounds}: ModelDock ${fmt(md.at(-1)!.ttftMs)} ms, apply ${fmt(bl.at(-1)!.ttftMs)} ms`);
    }

    const mdBurst = await Promise.all(range(burst).map((i) => modelDockSample(edge, `burst-${i}`, BURST_RESOURCES)));
    await releaseAll(edge, admin, tenantNs, mdBurst.map((s) => s.id));
    const burstNames = range(burst).map((i) => `apply-burst-${i}`);
    const blBurst = await Promise.all(burstNames.map((n) => baselineSample(base, n, mdBurst[0]!.spec)));
    await deleteBaseline(base, burstNames);

    const ttft = (s: Sample[]) => s.map((x) => x.ttftMs);
    const [mdP50, blP50] = [median(ttft(md)), median(ttft(bl))];
    const allowed = GOAL.factor * blP50 + GOAL.plusMs;
    const r = ratio(mdP50, allowed);
    const [mdB50, mdBMax, blB50, blBMax] = [median(ttft(mdBurst)), percentile(ttft(mdBurst), 100), median(ttft(blBurst)), percentile(ttft(blBurst), 100)];
    const burstR = ratio(mdB50, GOAL.factor * blB50 + GOAL.plusMs);
    const pathRow = (name: string, s: Sample[]) =>
      `| ${name} | ${s.length} | ${fmt(median(ttft(s)))} | ${fmt(Math.min(...ttft(s)))} | ${fmt(Math.max(...ttft(s)))} | ${fmt(median(s.map((x) => x.attempts)))} |`;
    return {
      summary: `ratio=${fmt(r)} (TTFT p50 ModelDock ${fmt(mdP50)} ms / (${GOAL.factor} × kubectl apply ${fmt(blP50)} ms + poll interval ${GOAL.plusMs} ms = ${fmt(allowed)} ms) ≤ 1: ${verdict(r, 1, false)}; ${fmt(ratio(mdP50, blP50))}× apply; burst of ${burst}: ModelDock p50 ${fmt(mdB50)} max ${fmt(mdBMax)} ms vs apply p50 ${fmt(blB50)} max ${fmt(blBMax)} ms, ratio=${fmt(burstR)} against the same goal, not judged)`,
      details: [
        `One pod of the mock model (${SAMPLE_RESOURCES.cpu}, ${SAMPLE_RESOURCES.memory}, readiness on /readyz: its 1 s warm-up, probed every 5 s) on the real node; ${rounds} samples per path, alternated (each path first in turn), after one warm-up of each; both paths' objects deleted and their pods gone before every sample. ModelDock: t0 = POST /requests sent to the Worker in workerd alone; then a streamed chat completion (4 tokens) through the edge (Worker → gateway pod → model pod) every ${RETRY_PAUSE_MS} ms until one streams; the moments from the admission's timeline (GET /requests/:id after the first token). kubectl apply: the Deployment and Service controller/modelservice/desired.ts builds from the spec the warm-up admission stored, with the real node's placement and no owner, created by the admin client (two creates) in a plain namespace; then the same request to the Service's ClusterIP (refused at first, then unanswered, until the pod is a Ready endpoint) every ${RETRY_PAUSE_MS} ms. Both paths give up a connection not made within ${CONNECT_TIMEOUT_MS} ms and send again (a SYN to a ClusterIP not programmed yet goes unanswered; without this the connect waits for the kernel's SYN retransmit). Attempts: requests sent until the first token.`,
        '',
        '| path | n | TTFT p50 ms | min ms | max ms | attempts p50 |',
        '|---|---|---|---|---|---|',
        pathRow('ModelDock (POST /requests → edge)', md),
        pathRow('kubectl apply (→ ClusterIP)', bl),
        '',
        `Per sample (ms, in order): ModelDock ${ttft(md).map((v) => fmt(v)).join(', ')}; kubectl apply ${ttft(bl).map((v) => fmt(v)).join(', ')}.`,
        '',
        "Per-moment breakdown, p50 over the samples of each moment minus t0 (ms). answered: the POST's 201 / both creates answered. admitted, delivered (the ModelService created), scheduled, started, ready: the admission's timeline (scheduled and started have second precision and, as the API reads them, never come before the moment ahead of them; ready is the controller's first Ready, which the edge waits for). pod bound, container running, pod Ready: when one watch over both paths' pods (by the controller's labels) first saw the pod with a node, a running container, Ready — the same for both paths, in milliseconds.",
        '',
        '| moment | ModelDock p50 ms | kubectl apply p50 ms |',
        '|---|---|---|',
        ...ROWS.map((m) => `| ${m} | ${cell(p50(md, m))} | ${cell(p50(bl, m))} |`),
        '',
        `Burst: ${burst} admissions POSTed at once (${BURST_RESOURCES.cpu}, ${BURST_RESOURCES.memory} each, so that all fit on the node), each polled as above; released; then ${burst} Deployment + Service pairs of the same spec applied at once.`,
        '',
        '| burst | n | TTFT p50 ms | TTFT max ms | pod bound p50 ms | pod Ready p50 ms | attempts p50 |',
        '|---|---|---|---|---|---|---|',
        `| ModelDock | ${burst} | ${fmt(mdB50)} | ${fmt(mdBMax)} | ${cell(p50(mdBurst, 'pod bound'))} | ${cell(p50(mdBurst, 'pod Ready'))} | ${fmt(median(mdBurst.map((x) => x.attempts)))} |`,
        `| kubectl apply | ${burst} | ${fmt(blB50)} | ${fmt(blBMax)} | ${cell(p50(blBurst, 'pod bound'))} | ${cell(p50(blBurst, 'pod Ready'))} | ${fmt(median(blBurst.map((x) => x.attempts)))} |`,
      ],
    };
  },
};
