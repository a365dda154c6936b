// B6 memory: the controller's RSS and heap after B3's largest round converged (ModelServices
// with their Deployments, Services and pods on KWOK), vs (a) a bare client-node ListWatch process
// holding the same objects (bench/lib/bare-listwatch.ts) and (b) kube-controller-manager's RSS
// in the same run. Goals: ≤ 1.0× (a), ≤ 1.5× (b).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../scripts/testenv/stack.ts';
import type { Benchmark } from './run.ts';
import { metricSum } from './lib/kube.ts';
import { rssMiB, rssParts } from './lib/proc-stats.ts';
import { fmt, ratio, verdict } from './lib/stats.ts';

const run = promisify(execFile);

export const b6: Benchmark = {
  id: 'B6',
  title: 'controller memory',
  async run(ctx) {
    const c = ctx.shared.converged;
    if (!c) throw new Error('B6 needs B3 to have run first (its converged objects)');
    const kubeconfig = join(ctx.stack.runDir, 'installs', c.namespace, 'controller.kubeconfig');
    const { stdout } = await run(process.execPath, [join(repoRoot, 'bench/lib/bare-listwatch.ts'), kubeconfig, c.namespace, '5000'], { cwd: repoRoot, maxBuffer: 1 << 20 });
    const bare = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { objects: number; rssMiB: number; heapUsedMiB: number; heapTotalMiB: number; externalMiB: number; anonMiB: number; fileMiB: number };
    const metrics = await c.controller.metrics();
    const mib = (name: string) => metricSum(metrics, name) / 2 ** 20;
    const heap = mib('nodejs_heap_size_used_bytes');
    const parts = rssParts(c.controller.proc.pid);
    const ours = parts?.rss ?? Number.NaN;
    const kcm = rssMiB(ctx.componentPid('kube-controller-manager')) ?? Number.NaN;
    const ra = ratio(ours, bare.rssMiB);
    const rb = ratio(ours, kcm);
    return {
      summary: `ratio=${fmt(ra)} (controller RSS vs bare client-node ListWatch; goal ≤ 1.0: ${verdict(ra, 1, false)}) ${fmt(rb)}× kube-controller-manager (≤ 1.5: ${verdict(rb, 1.5, false)}); ${fmt(ours)} MiB RSS, ${fmt(heap)} MiB heap; bare ${fmt(bare.rssMiB)} MiB; kcm ${fmt(kcm)} MiB; ${bare.objects} objects`,
      details: [
        `After B3's round of ${c.n} ModelServices converged: ${bare.objects} objects in the controller's caches (ModelServices, and its labelled Deployments, Services, Pods, EndpointSlices).`,
        '',
        '| process | RSS MiB | of it anonymous | of it file-backed (code) | heap used MiB | heap total MiB | external MiB |',
        '|---|---|---|---|---|---|---|',
        `| ModelDock controller | ${fmt(ours)} | ${fmt(parts?.anon ?? NaN)} | ${fmt(parts?.file ?? NaN)} | ${fmt(heap)} | ${fmt(mib('nodejs_heap_size_total_bytes'))} | ${fmt(mib('nodejs_external_memory_bytes'))} |`,
        `| bare client-node ListWatch, same objects | ${fmt(bare.rssMiB)} | ${fmt(bare.anonMiB)} | ${fmt(bare.fileMiB)} | ${fmt(bare.heapUsedMiB)} | ${fmt(bare.heapTotalMiB)} | ${fmt(bare.externalMiB)} |`,
        `| kube-controller-manager (whole cluster, every controller it runs) | ${fmt(kcm)} | | | | | |`,
      ],
    };
  },
};
