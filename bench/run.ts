// `npm run bench` (the whole suite) and `npm run bench -- --quick` (small N, for CI: it keeps the
// scripts from rotting; its numbers are not kept). `--only B1,B7` runs a selection; B6L (memory at
// 10,000 ModelServices, ≈ 40 min) runs only on its own: `npm run bench -- --only B6L`, and so does
// B10 (inference through the edge and the gateway: the real node, root only): `--only B10`, and
// B11 (time to first token on the real node): `--only B11`, and B12 (three clusters idle): `--only B12`.
// B8L (the ledger at 100,000 open reservations on MariaDB and on the 2-shard Vitess ledger) runs
// on its own too: `--only B8L`; B8 (10,000 on MariaDB) stays in the suite.
// Starts the local stack once (.stack/bench, or MODELDOCK_BENCH_STACK_DIR) with k8s/ installed as
// shipped; every benchmark starts what else it needs, measures its baseline in the same run,
// prints ONE summary line with its ratio, and is cleaned up before the next one starts. A full
// run appends to bench/RESULTS.md, a quick one to <run dir>/RESULTS-quick.md.
// Exit code 1 when a benchmark failed (threw); a missed goal is a result, not a failure.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { installBase } from '../scripts/testenv/install.ts';
import { repoRoot, startStack } from '../scripts/testenv/stack.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { createContext, type BenchContext } from './lib/context.ts';
import { loadNow, machine } from './lib/machine.ts';
import { appendRun, renderRun, type BenchResult } from './lib/results.ts';
import { b1 } from './b1-admission.ts';
import { b2 } from './b2-reads.ts';
import { b3 } from './b3-convergence.ts';
import { b4 } from './b4-outbox-lag.ts';
import { b5 } from './b5-idle.ts';
import { b6, b6l } from './b6-memory.ts';
import { b7 } from './b7-bundle.ts';
import { b8 } from './b8-ledger-scale.ts';
import { b8l } from './b8l-ledger-scale.ts';
import { b9 } from './b9.ts';
import { b10 } from './b10-gateway.ts';
import { b11 } from './b11-ttft.ts';
import { b12 } from './b12-clusters-idle.ts';

// Order: what needs no controller first (B9 beside the other reads); B3 leaves its converged
// objects for B5 and B6; B8 runs during B5's idle window (the suite must fit 15 minutes), in its
// own place when B5 is not run.
const ALL: Benchmark[] = [b7, b1, b2, b9, b4, b3, b5, b8, b8l, b6, b6l, b10, b11, b12];

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
const quick = values.quick ?? false;
const only = values.only?.split(',').map((s) => s.trim().toUpperCase());
const selected = ALL.filter((b) => (only ? only.includes(b.id) : !b.alone));
const alone = selected.find((b) => b.alone)?.alone;
if (alone && selected.length > 1) throw new Error(`${selected.filter((b) => b.alone).map((b) => b.id).join(', ')} runs alone (its own stack options): --only it`);
const log = (m: string) => console.error(`  ${m}`);

const m = machine();
const t0 = performance.now();
console.log(`bench: ${quick ? 'quick' : 'full'} run of ${selected.map((b) => b.id).join(' ')} on ${m.nproc} cores, load ${m.load}`);
const runDir = process.env.MODELDOCK_BENCH_STACK_DIR ?? join(repoRoot, '.stack/bench');
const stack = selected.some((b) => b.stack !== false) ? await startStack({ runDir, log: (msg) => log(msg), ...(process.env.MODELDOCK_BENCH_BIN_DIR ? { binDir: process.env.MODELDOCK_BENCH_BIN_DIR } : {}), ...(alone ?? {}) }) : undefined;
const metricsToken = stack ? (await installBase(stack.info, repoRoot, 24 * 3600)).metricsToken : '';
const ctx: BenchContext = createContext(stack ? { ...stack.info, metricsToken } : undefined, quick, log);
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await ctx.cleanup();
  await stack?.stop();
  process.exit(code);
};
process.on('SIGINT', () => void stop(130));
process.on('SIGTERM', () => void stop(143));
const results: BenchResult[] = [];
const failures: string[] = [];
async function runOne(b: Benchmark): Promise<void> {
  const start = performance.now();
  console.log(`${b.id} ${b.title}: running`);
  try {
    const r = await b.run(ctx);
    const res = { ...r, id: b.id, title: b.title, seconds: (performance.now() - start) / 1000 };
    results.push(res);
    console.log(`${b.id} ${r.summary} (${res.seconds.toFixed(0)} s)`);
  } catch (err) {
    const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
    failures.push(`${b.id}: ${msg.split('\n')[0]}`);
    console.log(`${b.id} FAILED: ${msg}`);
  }
}
const guestOf = new Map(selected.filter((b) => b.alongside && selected.some((h) => h.id === b.alongside)).map((b) => [b.alongside as string, b]));
for (const b of selected) {
  if (b.alongside && guestOf.get(b.alongside) === b) continue; // runs with its host
  const guest = guestOf.get(b.id);
  await Promise.all([runOne(b), guest && runOne(guest)]);
  if (!b.keepsState && !guest?.keepsState) await ctx.cleanup();
}
await ctx.cleanup();
const mode = `${quick ? 'quick' : 'full'} run (${selected.map((b) => b.id).join(' ')}), ${((performance.now() - t0) / 1000).toFixed(0)} s`;
const file = quick ? join(runDir, '..', 'RESULTS-quick.md') : join(repoRoot, 'bench/RESULTS.md');
appendRun(file, renderRun(m, mode, loadNow(), results, failures));
console.log(`bench: ${results.length} ran, ${failures.length} failed in ${((performance.now() - t0) / 1000).toFixed(0)} s; appended to ${file}`);
await stop(failures.length > 0 ? 1 : 0);
