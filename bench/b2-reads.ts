// B2 reads and delete: GET /requests/:id, GET /quota and DELETE /requests/:id through workerd vs
// baseline A doing the same service calls (getAdmission, getQuota, deleteAdmission) from Node
// through @planetscale/database to the same ps-http-sim, at concurrency 8; and DELETE vs POST
// through the Worker in the same run. Goals: each ≥ 0.7× baseline A; DELETE no slower than POST.
import { randomUUID } from 'node:crypto';
import { admit } from '../functions/services/admit.ts';
import { getQuota } from '../functions/services/quota.ts';
import { deleteAdmission, getAdmission } from '../functions/services/requests.ts';
import type { Benchmark } from './run.ts';
import { startApi, TENANT } from './lib/api.ts';
import { viaWorker } from './b1-admission.ts';
import { closedLoop } from './lib/load.ts';
import { describe, fmt, ratio, summarize, verdict, type LatencySummary } from './lib/stats.ts';

const CONCURRENCY = 8;

export const b2: Benchmark = {
  id: 'B2',
  title: 'reads and delete',
  async run(ctx) {
    const n = ctx.quick ? 48 : 320;
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
    const forWorker = await admitted(n + 8);
    const forA = await admitted(n + 8);
    const pick = (i: number) => pool[i % pool.length] as string;
    const run = async (op: (i: number) => Promise<void>): Promise<LatencySummary> => {
      await closedLoop({ concurrency: 4, total: 8, op }); // warm-up
      const r = await closedLoop({ concurrency: CONCURRENCY, total: n, op });
      return summarize(r.latenciesMs, r.wallMs);
    };
    const del = (ids: string[], fn: (id: string) => Promise<void>) => async () => fn(ids.pop() as string);

    const ops = {
      'GET /requests/:id': [
        await run(async (i) => void (await api.call('GET', `/requests/${pick(i)}`, 200))),
        await run(async (i) => void (await getAdmission(api.a, TENANT, pick(i)))),
      ],
      'GET /quota': [await run(async () => void (await api.call('GET', '/quota', 200))), await run(async () => void (await getQuota(api.a, TENANT)))],
      'DELETE /requests/:id': [
        await run(del(forWorker, async (id) => void (await api.call('DELETE', `/requests/${id}`, 202)))),
        await run(del(forA, async (id) => void (await deleteAdmission(api.a, TENANT, id, randomUUID())))),
      ],
    } as Record<string, [LatencySummary, LatencySummary]>;
    const post = await run(viaWorker(api));
    const ratios = Object.fromEntries(Object.entries(ops).map(([k, [w, a]]) => [k, ratio(w.perSecond, a.perSecond)]));
    const worst = Math.min(...Object.values(ratios));
    const delVsPost = ratio((ops['DELETE /requests/:id'] as [LatencySummary, LatencySummary])[0].perSecond, post.perSecond);
    return {
      summary: `ratio=${fmt(worst)} (worst Worker/A of GET id ${fmt(ratios['GET /requests/:id'] ?? NaN)}, GET quota ${fmt(ratios['GET /quota'] ?? NaN)}, DELETE ${fmt(ratios['DELETE /requests/:id'] ?? NaN)}; goal ≥ 0.7: ${verdict(worst, 0.7, true)}) DELETE/POST ${fmt(delVsPost)} (goal ≥ 1: ${verdict(delVsPost, 1, true)})`,
      details: [
        `Concurrency ${CONCURRENCY}, ${n} operations each.`,
        '',
        '| operation | Worker (workerd) | baseline A (Node → ps-http-sim) | Worker / A |',
        '|---|---|---|---|',
        ...Object.entries(ops).map(([k, [w, a]]) => `| ${k} | ${describe(w)} | ${describe(a)} | ${fmt(ratios[k] ?? NaN)} |`),
        `| POST /requests (same run) | ${describe(post)} | | |`,
        '',
        `DELETE / POST through the Worker: ${fmt(delVsPost)}.`,
      ],
    };
  },
};
