// B2 reads and delete: GET /requests/:id, GET /quota and DELETE /requests/:id through workerd vs
// baseline A doing the same service calls (getAdmission, getQuota, deleteAdmission) from Node
// through @planetscale/database to the same ps-http-sim, at concurrency 8; and DELETE vs POST
// through the Worker in the same run. Goals: each ≥ 0.7× baseline A; DELETE no slower than POST.
import { randomUUID } from 'node:crypto';
import { admit } from '../functions/services/admit.ts';
import { getQuota } from '../functions/services/quota.ts';
import { deleteAdmission, getAdmission } from '../functions/services/requests.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { startApi, TENANT, viaWorker } from './lib/api.ts';
import { cpuCell, cpuPerRequest } from './lib/cpu-per-request.ts';
import { closedLoop, interleaved } from './lib/load.ts';
import { describe, fmt, ratio, summarize, verdict, type LatencySummary } from './lib/stats.ts';

const CONCURRENCY = 8;
const ROUNDS = 4;

export const b2: Benchmark = {
  id: 'B2',
  title: 'reads and delete',
  async run(ctx) {
    const n = ctx.quick ? 32 : 200;
    const api = await startApi(ctx, CONCURRENCY);
    const admitted = async (count: number) => {
      const ids: string[] = [];
      await closedLoop({
        concurrency: CONCURRENCY,
        total: count,
        op: async () => {
          const r = await admit(api.a, { tenant: TENANT, idempotencyKey: api.newKey(), requestId: randomUUID(), parsed: api.parsed });
          ids.push(r.admission.id);
        },
      });
      return ids;
    };
    const pool = await admitted(50);
    const forDev = await admitted(n + 8);
    const forDirect = await admitted(n + 8);
    const forA = await admitted(n + 8);
    const pick = (i: number) => pool[i % pool.length] as string;
    type Trio = [dev: LatencySummary, direct: LatencySummary, a: LatencySummary];
    const measure = async (dev: (i: number) => Promise<void>, direct: (i: number) => Promise<void>, a: (i: number) => Promise<void>): Promise<Trio> => {
      for (const op of [dev, direct, a]) await closedLoop({ concurrency: 4, total: 8, op }); // warm-up
      const r = await interleaved({ dev, direct, a }, { concurrency: CONCURRENCY, total: n, rounds: ROUNDS });
      return [summarize(r.dev.latenciesMs, r.dev.wallMs), summarize(r.direct.latenciesMs, r.direct.wallMs), summarize(r.a.latenciesMs, r.a.wallMs)];
    };
    const del = (ids: string[], fn: (id: string) => Promise<void>) => async () => fn(ids.pop() as string);
    const ops: Record<string, Trio> = {
      'GET /requests/:id': await measure(
        async (i) => void (await api.call('GET', `/requests/${pick(i)}`, 200)),
        async (i) => void (await api.callDirect('GET', `/requests/${pick(i)}`, 200)),
        async (i) => void (await getAdmission(api.a, TENANT, pick(i))),
      ),
      'GET /quota': await measure(
        async () => void (await api.call('GET', '/quota', 200)),
        async () => void (await api.callDirect('GET', '/quota', 200)),
        async () => void (await getQuota(api.a, TENANT)),
      ),
      'DELETE /requests/:id': await measure(
        del(forDev, async (id) => void (await api.call('DELETE', `/requests/${id}`, 202))),
        del(forDirect, async (id) => void (await api.callDirect('DELETE', `/requests/${id}`, 202))),
        del(forA, async (id) => void (await deleteAdmission(api.a, TENANT, id, randomUUID()))),
      ),
    };
    // Where a GET's time goes: CPU per request by process, a separate pass per path (as B1 does for POST).
    const cpuN = ctx.quick ? 16 : 160;
    const getCpu = new Map<string, Map<string, number>>();
    getCpu.set('Worker in workerd (no dev proxy)', await cpuPerRequest(api, cpuN, async (i) => void (await api.callDirect('GET', `/requests/${pick(i)}`, 200))));
    getCpu.set('baseline A (Node → ps-http-sim)', await cpuPerRequest(api, cpuN, async (i) => void (await getAdmission(api.a, TENANT, pick(i)))));
    // POST in the same alternation as a DELETE, so "DELETE no slower than POST" compares like with like.
    const posts = await interleaved({ dev: viaWorker(api), direct: viaWorker(api, api.callDirect) }, { concurrency: CONCURRENCY, total: n, rounds: ROUNDS });
    const post = [summarize(posts.dev.latenciesMs, posts.dev.wallMs), summarize(posts.direct.latenciesMs, posts.direct.wallMs)] as const;
    const ratios = Object.fromEntries(Object.entries(ops).map(([k, [, direct, a]]) => [k, ratio(direct.perSecond, a.perSecond)]));
    const worst = Math.min(...Object.values(ratios));
    const dels = ops['DELETE /requests/:id'] as Trio;
    const delVsPost = ratio(dels[1].perSecond, post[1].perSecond);
    const delVsPostDev = ratio(dels[0].perSecond, post[0].perSecond);
    return {
      summary: `ratio=${fmt(worst)} (worst workerd/A of GET id ${fmt(ratios['GET /requests/:id'] ?? NaN)}, GET quota ${fmt(ratios['GET /quota'] ?? NaN)}, DELETE ${fmt(ratios['DELETE /requests/:id'] ?? NaN)}; goal ≥ 0.7: ${verdict(worst, 0.7, true)}) DELETE/POST ${fmt(delVsPost)} (goal ≥ 1: ${verdict(delVsPost, 1, true)}; via wrangler dev ${fmt(delVsPostDev)})`,
      details: [
        `Concurrency ${CONCURRENCY}, ${n} operations per path, in ${ROUNDS} rounds alternating the paths (load changes fall on all alike).`,
        '',
        '| operation | Worker via wrangler dev | Worker in workerd, no dev proxy | baseline A (Node → ps-http-sim) | workerd / A | wrangler dev / A |',
        '|---|---|---|---|---|---|',
        ...Object.entries(ops).map(([k, [dev, direct, a]]) => `| ${k} | ${describe(dev)} | ${describe(direct)} | ${describe(a)} | ${fmt(ratios[k] ?? NaN)} | ${fmt(ratio(dev.perSecond, a.perSecond))} |`),
        `| POST /requests (same run) | ${describe(post[0])} | ${describe(post[1])} | | | |`,
        '',
        `DELETE / POST: ${fmt(delVsPost)} in workerd, ${fmt(delVsPostDev)} through wrangler dev.`,
        '',
        `CPU ms per GET /requests/:id at c=8 (user + system from /proc, by process; a separate pass of ${cpuN} per path; MariaDB not included):`,
        '',
        '| path | CPU ms per request |',
        '|---|---|',
        ...[...getCpu].map(([name, m]) => `| ${name} | ${cpuCell(m)} |`),
      ],
    };
  },
};
