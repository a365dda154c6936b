// B1 admission: POST /requests through workerd (wrangler dev) at concurrency 1, 8, 32 — req/s,
// p50, p99 — vs baseline A, the Worker's own admit() from Node through @planetscale/database to
// the same ps-http-sim, and baseline B, the same admit() through mysql2 straight to MariaDB.
// Where the time goes: round trips per admission × the RTT of one statement on each path, and
// CPU per request of each process (workerd, wrangler's node, ps-http-sim) from /proc.
// Goal: Worker ≥ 0.7× baseline A (the headline ratio is at concurrency 8).
import { randomUUID } from 'node:crypto';
import { admit } from '../functions/services/admit.ts';
import type { ServiceDeps } from '../functions/services/deps.ts';
import type { Benchmark } from './run.ts';
import { BODY, startApi, TENANT, type Api } from './lib/api.ts';
import { closedLoop } from './lib/load.ts';
import { cpuByCommand, cpuDelta } from './lib/proc-stats.ts';
import { describe, fmt, median, ratio, summarize, verdict, type LatencySummary } from './lib/stats.ts';

export const viaWorker = (api: Api) => async () => {
  await api.call('POST', '/requests', 201, { body: BODY, key: api.newKey() });
};
export const viaService = (api: Api, deps: ServiceDeps) => async () => {
  await admit(deps, { tenant: TENANT, idempotencyKey: api.newKey(), requestId: randomUUID(), parsed: api.parsed });
};

/** p50 of one statement's round trip, sequentially. */
export async function rttMs(exec: () => Promise<unknown>, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await exec();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

export const b1: Benchmark = {
  id: 'B1',
  title: 'admission (POST /requests)',
  async run(ctx) {
    const levels: Array<[number, number]> = ctx.quick ? [[1, 15], [8, 64], [32, 96]] : [[1, 100], [8, 400], [32, 640]];
    const api = await startApi(ctx, 32);
    const paths = { worker: viaWorker(api), a: viaService(api, api.a), b: viaService(api, api.b) };
    for (const op of Object.values(paths)) await closedLoop({ concurrency: 4, total: 12, op }); // warm-up: JIT, connections

    const rows: string[] = [];
    const at8: Record<string, LatencySummary> = {};
    let cpu = new Map<string, number>();
    let perAdmission = 0;
    for (const [concurrency, total] of levels) {
      const res: Record<string, LatencySummary> = {};
      for (const [name, op] of Object.entries(paths)) {
        const before = name === 'worker' ? cpuByCommand([api.worker.process.pid, api.ledger.sim.pid]) : undefined;
        const trips = api.a.db.roundTrips;
        const r = await closedLoop({ concurrency, total, op });
        res[name] = summarize(r.latenciesMs, r.wallMs);
        if (before && concurrency === 8) cpu = new Map([...cpuDelta(before, cpuByCommand([api.worker.process.pid, api.ledger.sim.pid]))].map(([k, v]) => [k, v / total]));
        if (name === 'a') perAdmission = (api.a.db.roundTrips - trips) / total;
      }
      const w = res.worker as LatencySummary;
      const a = res.a as LatencySummary;
      const b = res.b as LatencySummary;
      if (concurrency === 8) Object.assign(at8, res);
      rows.push(`| ${concurrency} | ${describe(w)} | ${describe(a)} | ${describe(b)} | ${fmt(ratio(w.perSecond, a.perSecond))} | ${fmt(ratio(w.perSecond, b.perSecond))} |`);
    }
    const rttA = await rttMs(() => api.a.db.execute('SELECT 1'), 30);
    const rttB = await rttMs(() => api.b.db.execute('SELECT 1'), 30);
    const headline = ratio((at8.worker as LatencySummary).perSecond, (at8.a as LatencySummary).perSecond);
    const cpuLine = [...cpu].filter(([, v]) => v > 0.05).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${fmt(v)} ms`).join(', ');
    const w8 = at8.worker as LatencySummary;
    return {
      summary: `ratio=${fmt(headline)} (Worker vs baseline A at c=8; goal ≥ 0.7: ${verdict(headline, 0.7, true)}) Worker ${fmt(w8.perSecond)}/s p50 ${fmt(w8.p50)} ms; A ${fmt((at8.a as LatencySummary).perSecond)}/s; B ${fmt((at8.b as LatencySummary).perSecond)}/s; ${fmt(perAdmission)} round trips × RTT ${fmt(rttA)} ms (HTTP) / ${fmt(rttB)} ms (mysql2)`,
      details: [
        '| concurrency | Worker (workerd) | baseline A (Node → ps-http-sim) | baseline B (mysql2 → MariaDB) | Worker / A | Worker / B |',
        '|---|---|---|---|---|---|',
        ...rows,
        '',
        `Where the time goes (c=8): ${fmt(perAdmission)} round trips per admission (BEGIN, 4 statements, COMMIT); one statement's RTT (sequential \`SELECT 1\`, p50) is ${fmt(rttA)} ms through ps-http-sim and ${fmt(rttB)} ms through mysql2, so the statements alone cost ≥ ${fmt(perAdmission * rttA)} ms per admission on the HTTP path. CPU per request (user + system, /proc): ${cpuLine} — workerd runs the Worker, wrangler's node runs the dev proxy and log relay, ps-http-sim serves the statements.`,
      ],
    };
  },
};
