// B7 Worker bundle: `wrangler deploy --dry-run --outdir` of functions/worker.ts vs a stub Worker
// importing the same libraries (bench/stub/worker.ts): size raw and gzip, and start-up time —
// the bundle parsed and its top level evaluated (Node's V8, a fresh process per sample, median
// of 5), the part of a cold start the bundle decides. Goals: ≤ 1.3× the stub, ≤ 1 MB gzip.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { repoRoot } from '../scripts/testenv/stack.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { fmt, median, ratio, verdict } from './lib/stats.ts';

const run = promisify(execFile);
const wrangler = join(repoRoot, 'node_modules/.bin/wrangler');
const COMPAT = /compatibility_date\s*=\s*"([^"]+)"/.exec(readFileSync(join(repoRoot, 'wrangler.toml'), 'utf8'))?.[1] ?? '2026-04-26';

async function bundle(outdir: string, script?: string): Promise<string> {
  const args = script
    ? ['deploy', script, '--name', 'bench-stub', `--compatibility-date=${COMPAT}`, '--dry-run', `--outdir=${outdir}`]
    : ['deploy', '--dry-run', `--outdir=${outdir}`];
  await run(wrangler, args, { cwd: repoRoot, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: '1' }, maxBuffer: 1 << 24 });
  return join(outdir, 'worker.js');
}

/** ms to import (parse + evaluate) `file` in a fresh Node process, median of `n`. */
async function startupMs(file: string, n: number): Promise<number> {
  const probe = `const t=performance.now();await import(${JSON.stringify(`file://${file}`)});process.stdout.write(String(performance.now()-t));`;
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: repoRoot });
    samples.push(Number(stdout));
  }
  return median(samples);
}

export const b7: Benchmark = {
  id: 'B7',
  title: 'Worker bundle',
  stack: false,
  async run(ctx) {
    const dir = mkdtempSync(join(tmpdir(), 'md-b7-'));
    ctx.defer(async () => rmSync(dir, { recursive: true, force: true }));
    const app = await bundle(join(dir, 'app'));
    const stub = await bundle(join(dir, 'stub'), 'bench/stub/worker.ts');
    const size = (f: string) => {
      const raw = readFileSync(f);
      return { raw: raw.length, gzip: gzipSync(raw).length };
    };
    const a = size(app);
    const s = size(stub);
    // The import probe needs .mjs next to nothing else: copy to a neutral name.
    const appMjs = join(dir, 'app.mjs');
    const stubMjs = join(dir, 'stub.mjs');
    writeFileSync(appMjs, readFileSync(app));
    writeFileSync(stubMjs, readFileSync(stub));
    const samples = ctx.quick ? 3 : 5;
    const appStart = await startupMs(appMjs, samples);
    const stubStart = await startupMs(stubMjs, samples);
    const kib = (b: number) => fmt(b / 1024);
    const gzRatio = ratio(a.gzip, s.gzip);
    const rawRatio = ratio(a.raw, s.raw);
    const startRatio = ratio(appStart, stubStart);
    const gzipOk = a.gzip <= 1024 * 1024;
    return {
      summary: `ratio=${fmt(gzRatio)} (gzip vs stub; goal ≤ 1.3: ${verdict(gzRatio, 1.3, false)}) raw ${kib(a.raw)} KiB vs ${kib(s.raw)} KiB (${fmt(rawRatio)}×), gzip ${kib(a.gzip)} KiB vs ${kib(s.gzip)} KiB (≤ 1 MiB: ${gzipOk ? 'ok' : 'MISS'}), start-up ${fmt(appStart)} ms vs ${fmt(stubStart)} ms (${fmt(startRatio)}×)`,
      details: [
        '| bundle | raw KiB | gzip KiB | start-up ms (import in Node, median) |',
        '|---|---|---|---|',
        `| functions/worker.ts | ${kib(a.raw)} | ${kib(a.gzip)} | ${fmt(appStart)} |`,
        `| bench/stub/worker.ts (same libraries) | ${kib(s.raw)} | ${kib(s.gzip)} | ${fmt(stubStart)} |`,
        `| ratio | ${fmt(rawRatio)} | ${fmt(gzRatio)} | ${fmt(startRatio)} |`,
      ],
    };
  },
};
