// B1 admission: POST /requests through workerd (wrangler dev) at concurrency 1, 8, 32 — req/s,
// p50, p99 — vs baseline A, the Worker's own admit() from Node through @planetscale/database to
// the same ps-http-sim, and baseline B, the same admit() through mysql2 straight to MariaDB.
// Where the time goes: round trips per admission × the RTT of one statement on each path, and
// CPU per request of each process (workerd, wrangler's node, ps-http-sim) from /proc.
// Goal: Worker ≥ 0.7× baseline A (the headline ratio is at concurrency 8).
import { randomUUID } from 'node:crypto';
import { admit } from '../functions/services/admit.ts';
import type { ServiceDeps } from '../functions/services/deps.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { startApi, TENANT, viaWorker, type Api } from './lib/api.ts';
import { closedLoop, interleaved, type LoadResult } from './lib/load.ts';
import { cpuCell, cpuPerRequest } from './lib/cpu-per-request.ts';
import { describe, fmt, median, ratio, summarize, verdict, type LatencySummary } from './lib/stats.ts';

const viaService = (api: Api, deps: ServiceDeps) => async () => {
  await admit(deps, { tenant: TENANT, idempotencyKey: api.newKey(), requestId: randomUUID(), parsed: api.parsed });
};

/** p50 of one statement's round trip, sequentially. */
async function rttMs(exec: () => Promise<unknown>, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await exec();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

const ROUNDS = 4;
const NAMES = { dev: 'Worker via wrangler dev', direct: 'Worker in workerd (no dev proxy)', a: 'baseline A (Node → ps-http-sim)', b: 'baseline B (mysql2 → MariaDB)' } as const;
type PathName = keyof typeof NAMES;

export const b1: Benchmark = {
  id: 'B1',
  title: 'admission (POST /requests)',
  async run(ctx) {
    const levels: Array<[number, number]> = ctx.quick ? [[1, 8], [8, 32], [32, 64]] : [[1, 60], [8, 320], [32, 320]];
    const api = await startApi(ctx, 32);
    const paths: Record<PathName, () => Promise<void>> = { dev: viaWorker(api), direct: viaWorker(api, api.callDirect), a: viaService(api, api.a), b: viaService(api, api.b) };
    for (const op of Object.values(paths)) await closedLoop({ concurrency: 4, total: 12, op }); // warm-up: JIT, connections

    const rows: string[] = [];
    const at8 = {} as Record<PathName, LatencySummary>;
    const cpu = new Map<PathName, Map<string, number>>();
    let perAdmission = 0;
    for (const [concurrency, total] of levels) {
      const trips = api.a.db.roundTrips;
      const r = await interleaved(paths, { concurrency, total, rounds: ROUNDS });
      perAdmission = (api.a.db.roundTrips - trips) / r.a.latenciesMs.length;
      const res = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, summarize((v as LoadResult).latenciesMs, (v as LoadResult).wallMs)])) as Record<PathName, LatencySummary>;
      if (concurrency === 8) Object.assign(at8, res);
      rows.push(`| ${concurrency} | ${describe(res.dev)} | ${describe(res.direct)} | ${describe(res.a)} | ${describe(res.b)} | ${fmt(ratio(res.direct.perSecond, res.a.perSecond))} | ${fmt(ratio(res.dev.perSecond, res.a.perSecond))} | ${fmt(ratio(res.direct.perSecond, res.b.perSecond))} |`);
    }
    // CPU per request: a separate pass at concurrency 8, one path at a time.
    const cpuN = ctx.quick ? 16 : 120;
    for (const [name, op] of Object.entries(paths) as Array<[PathName, () => Promise<void>]>) cpu.set(name, await cpuPerRequest(api, cpuN, op));
    const rttA = await rttMs(() => api.a.db.execute('SELECT 1'), 30);
    const rttB = await rttMs(() => api.b.db.execute('SELECT 1'), 30);
    const headline = ratio(at8.direct.perSecond, at8.a.perSecond);
    const cpuRows = [...cpu].map(([name, m]) => `| ${NAMES[name]} | ${cpuCell(m)} |`);
    return {
      summary: `ratio=${fmt(headline)} (Worker in workerd vs baseline A at c=8; goal ≥ 0.7: ${verdict(headline, 0.7, true)}) workerd ${fmt(at8.direct.perSecond)}/s p50 ${fmt(at8.direct.p50)} ms; via wrangler dev ${fmt(at8.dev.perSecond)}/s (${fmt(ratio(at8.dev.perSecond, at8.a.perSecond))}×); A ${fmt(at8.a.perSecond)}/s; B ${fmt(at8.b.perSecond)}/s; ${fmt(perAdmission)} round trips × RTT ${fmt(rttA)} ms (HTTP) / ${fmt(rttB)} ms (mysql2)`,
      details: [
        `Each level runs the four paths in ${ROUNDS} alternating rounds (load changes fall on all alike).`,
        '',
        '| concurrency | Worker via wrangler dev | Worker in workerd, no dev proxy | baseline A (Node → ps-http-sim) | baseline B (mysql2 → MariaDB) | workerd / A | wrangler dev / A | workerd / B |',
        '|---|---|---|---|---|---|---|---|',
        ...rows,
        '',
        `Where the time goes: ${fmt(perAdmission)} round trips per admission (BEGIN, 4 statements, COMMIT); one statement's RTT (sequential \`SELECT 1\`, p50) is ${fmt(rttA)} ms through ps-http-sim and ${fmt(rttB)} ms through mysql2, so the statements alone cost ≥ ${fmt(perAdmission * rttA)} ms per admission on the HTTP path and ≥ ${fmt(perAdmission * rttB)} ms on mysql2's. The dev proxy is wrangler dev's Node process in front of workerd (the "no dev proxy" column runs the same bundle in workerd alone, bench/lib/workerd-worker.ts).`,
        '',
        `CPU ms per admission at c=8 (user + system from /proc, by process; a separate pass of ${cpuN} per path):`,
        '',
        '| path | CPU ms per request |',
        '|---|---|',
        ...cpuRows,
      ],
    };
  },
};
