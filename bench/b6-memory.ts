// B6 memory: the controller's RSS and heap after convergence (ModelServices with their
// Deployments, Services and pods on KWOK), vs (a) a bare client-node ListWatch process holding
// the same objects (bench/lib/bare-listwatch.ts) and (b) kube-controller-manager's RSS in the
// same run. Goals: ≤ 1.0× (a), ≤ 1.5× (b).
//   B6: after B3's largest round (1,000 ModelServices), in every full run.
//   B6L: after its own round of 10,000, run on its own (`npm run bench -- --only B6L`): converging
//   10,000 takes kube-controller-manager ≥ 100,000 writes, over half an hour at its default client
//   QPS of 20, so this run starts it with a higher one (B3, which compares with kcm at QPS 20, cannot
//   share such a stack), and it does not fit the full run's 15 minutes. With the shipped 4 workers
//   the ModelService queue is its critical path on 2 cores (≈ 1 s per reconcile on a saturated API
//   server; 947 of 10,000 Running after 43 min), so its controller runs with B6L_WORKERS. Past its
//   window it measures anyway, with every object cached, and says so in its summary.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { paths } from '../controller/runtime/kube.ts';
import { API_VERSION, KIND, LABELS, type ModelService } from '../schema/model-service.ts';
import { repoRoot } from '../scripts/testenv/stack.ts';
import type { Benchmark } from './lib/benchmark.ts';
import type { BenchContext, Controller } from './lib/context.ts';
import { ensurePodCapacity, metricSum, until, untilWritesSettle } from './lib/kube.ts';
import { closedLoop } from './lib/load.ts';
import { SPEC } from './lib/model-service-spec.ts';
import { rssMiB, rssParts } from './lib/proc-stats.ts';
import { fmt, ratio, verdict } from './lib/stats.ts';

const run = promisify(execFile);

/** B6L's kube-controller-manager client: QPS / burst (its default is 20 / 30). */
const LARGE_KCM_QPS = 400;
/** B6L's controller: concurrent ModelService reconciles (shipped: 4), as kcm gets its higher QPS. */
const B6L_WORKERS = 16;
/** How long B6L waits for its 10,000 ModelServices to converge before it measures anyway. */
const B6L_WINDOW_MS = 75 * 60_000;

async function measure(ctx: BenchContext, controller: Controller, namespace: string, what: string) {
  const kubeconfig = join(ctx.stack.runDir, 'installs', namespace, 'controller.kubeconfig');
  const { stdout } = await run(process.execPath, [join(repoRoot, 'bench/lib/bare-listwatch.ts'), kubeconfig, namespace, '5000'], { cwd: repoRoot, maxBuffer: 1 << 20 });
  const bare = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { objects: number; rssMiB: number; heapUsedMiB: number; heapTotalMiB: number; externalMiB: number; anonMiB: number; fileMiB: number };
  const metrics = await controller.metrics();
  const mib = (name: string) => metricSum(metrics, name) / 2 ** 20;
  const heap = mib('nodejs_heap_size_used_bytes');
  const parts = rssParts(controller.proc.pid);
  const ours = parts?.rss ?? Number.NaN;
  const kcm = rssMiB(ctx.componentPid('kube-controller-manager')) ?? Number.NaN;
  const ra = ratio(ours, bare.rssMiB);
  const rb = ratio(ours, kcm);
  return {
    summary: `ratio=${fmt(ra)} (controller RSS vs bare client-node ListWatch; goal ≤ 1.0: ${verdict(ra, 1, false)}) ${fmt(rb)}× kube-controller-manager (≤ 1.5: ${verdict(rb, 1.5, false)}); ${fmt(ours)} MiB RSS, ${fmt(heap)} MiB heap; bare ${fmt(bare.rssMiB)} MiB; kcm ${fmt(kcm)} MiB; ${bare.objects} objects`,
    details: [
      `${what}: ${bare.objects} objects in the controller's caches (ModelServices, and its labelled Deployments, Services, Pods, EndpointSlices).`,
      '',
      '| process | RSS MiB | of it anonymous | of it file-backed (code) | heap used MiB | heap total MiB | external MiB |',
      '|---|---|---|---|---|---|---|',
      `| ModelDock controller | ${fmt(ours)} | ${fmt(parts?.anon ?? NaN)} | ${fmt(parts?.file ?? NaN)} | ${fmt(heap)} | ${fmt(mib('nodejs_heap_size_total_bytes'))} | ${fmt(mib('nodejs_external_memory_bytes'))} |`,
      `| bare client-node ListWatch, same objects | ${fmt(bare.rssMiB)} | ${fmt(bare.anonMiB)} | ${fmt(bare.fileMiB)} | ${fmt(bare.heapUsedMiB)} | ${fmt(bare.heapTotalMiB)} | ${fmt(bare.externalMiB)} |`,
      `| kube-controller-manager (whole cluster, every controller it runs) | ${fmt(kcm)} | | | | | |`,
    ],
  };
}

export const b6: Benchmark = {
  id: 'B6',
  title: 'controller memory',
  async run(ctx) {
    const c = ctx.shared.converged;
    if (!c) throw new Error('B6 needs B3 to have run first (its converged objects)');
    return measure(ctx, c.controller, c.namespace, `After B3's round of ${c.n} ModelServices converged`);
  },
};

export const b6l: Benchmark = {
  id: 'B6L',
  title: 'controller memory at 10,000 ModelServices',
  alone: { kcmArgs: [`--kube-api-qps=${LARGE_KCM_QPS}`, `--kube-api-burst=${2 * LARGE_KCM_QPS}`] },
  async run(ctx) {
    const n = ctx.quick ? 50 : 10_000;
    const ns = await ctx.namespace('b6-large');
    const existing = await ctx.admin.list('/api/v1/pods');
    await ensurePodCapacity(ctx.admin, existing.items.length + n + 50);
    const ledger = await ctx.ledger();
    // The controller as shipped (no client-side QPS limit, k8s/base/controller.yaml) but for its workers.
    const controller = await ctx.controller('controller-b6-large', ns, { DATABASE_URL: ledger.url, WORKERS: String(B6L_WORKERS) });
    const t = performance.now();
    await closedLoop({
      concurrency: 16,
      total: n,
      op: async (i) => {
        await ctx.admin.create(paths.modelServices(ns.name), { apiVersion: API_VERSION, kind: KIND, metadata: { name: `m${i}`, labels: { [LABELS.instance]: ns.name } }, spec: SPEC });
      },
    });
    const createdS = (performance.now() - t) / 1000;
    // Past the window the memory is measured anyway, with every object cached, and the summary
    // says how far convergence had come. Progress is read from the API server's watch cache
    // (resourceVersion 0) every 30 s: a quorum list of 10,000 objects costs the saturated API
    // server what the objects under test need.
    const windowMs = ctx.quick ? 5 * 60_000 : B6L_WINDOW_MS;
    let running = 0;
    const converged = await until(`${n} ModelServices Running`, windowMs, async () => {
      const list = await ctx.admin.list<ModelService>(paths.modelServices(ns.name), { resourceVersion: '0' });
      running = list.items.filter((m) => m.status?.phase === 'Running').length;
      ctx.log(`B6L: ${running} of ${n} Running after ${fmt((performance.now() - t) / 60_000)} min`);
      return running === n;
    }, ctx.quick ? 5_000 : 30_000).then(() => true, () => false);
    const minutes = windowMs / 60_000;
    let how = `NOT converged: ${running} of ${n} ModelServices Running when the ${minutes}-minute window closed (created in ${fmt(createdS)} s at concurrency 16; every object is cached, most statuses are still to be written`;
    if (converged) {
      const convergedS = (performance.now() - t) / 1000;
      const settledS = await untilWritesSettle(() => controller.metrics(), 600_000);
      how = `After ${n} ModelServices converged (created in ${fmt(createdS)} s at concurrency 16, all Running ${fmt(convergedS)} s after the first create, the controller's writes settled ${fmt(settledS)} s later`;
    }
    const m = await measure(ctx, controller, ns.name, `${how}; kube-controller-manager at client QPS ${LARGE_KCM_QPS}, burst ${2 * LARGE_KCM_QPS}; the controller with WORKERS=${B6L_WORKERS})`);
    return converged ? m : { ...m, summary: `${m.summary}; NOT converged (${running}/${n} Running after ${minutes} min)` };
  },
};
