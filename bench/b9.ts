// B9 reads with a long history: GET /quota, the list's first page and a page from a cursor deep in
// the tenant's history (GET /requests?limit=20[&cursor=…]) through the Worker (wrangler dev), for a
// tenant with 10,000 released reservations (a quick run too: writing them takes a second; it only
// sends fewer requests) against a tenant with none — both with the same 50 open ones, in the same
// ledger, measured in the same run, alternated in rounds.
// Beside the latencies, the rows MariaDB read for each route's statements (Handler_read_*: not
// affected by the machine's load), and for a page of the cron sweep before and after the released
// reservations were written. Goal: ratio ≈ 1 (≤ 1.3): the cost does not grow with released
// reservations. The rows are written straight into the ledger (test/support/bulk-reservations.ts).
import { getQuota } from '../functions/services/quota.ts';
import { listAdmissions } from '../functions/services/requests.ts';
import { staleReservations } from '../functions/db/scheduled-runs.ts';
import { ulidGenerator, type ServiceDeps } from '../functions/services/deps.ts';
import type { Db, Queryable } from '../ledger/db.ts';
import { bulkId, bulkReservations, rowsRead } from '../test/support/bulk-reservations.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { interleaved } from './lib/load.ts';
import { describe, fmt, ratio, summarize, verdict, type LatencySummary } from './lib/stats.ts';
import { createPlacer } from '../ledger/placement.ts';

const OPEN = 50;
const PAGE = 20;
const CONCURRENCY = 4;
const ROUNDS = 8;
const GOAL = 1.3;
const NONE = 'b9-none';
const MANY = 'b9-many';
const keyOf = (tenant: string) => `${tenant}-bench-key-0123456789`;

/** The services' Db on one session (reads only: what rowsRead counts). */
function sessionDb(q: Queryable): Db {
  const db: Db = {
    execute: (sql, args) => q.execute(sql, args),
    transaction: () => Promise.reject(new Error('B9 measures reads only')),
    withSignal: () => db,
    onShard: () => db,
  };
  return db;
}

export const b9: Benchmark = {
  id: 'B9',
  title: 'reads with a long history (released reservations)',
  async run(ctx) {
    const released = 10_000;
    const n = ctx.quick ? 80 : 240;
    const ledger = await ctx.ledger();
    for (const t of [NONE, MANY]) await ledger.setQuota(t, 'cpu=1000', 'memory=1000Gi', 'modelservices=1000');
    // The open ones are newer than the history (ids '01N…' > '01H…').
    await bulkReservations(ledger.db, { tenant: NONE, prefix: '01N0', n: OPEN, state: 'ready' });
    await bulkReservations(ledger.db, { tenant: MANY, prefix: '01N1', n: OPEN, state: 'ready' });
    const future = new Date(Date.UTC(2100, 0, 1));
    const sweepPage = (q: Queryable) => staleReservations(q, null, future, PAGE);
    await ledger.db.execute('ANALYZE TABLE reservation, outbox, binding');
    const sweepBefore = await rowsRead(ledger.db, sweepPage);
    const t0 = performance.now();
    await bulkReservations(ledger.db, { tenant: MANY, prefix: '01H1', n: released, state: 'released' });
    await ledger.db.execute('ANALYZE TABLE reservation, outbox, binding');
    ctx.log(`B9: ${released} released reservations written in ${fmt((performance.now() - t0) / 1000)} s`);
    const sweepAfter = await rowsRead(ledger.db, sweepPage);

    // What each route reads: the services' own statements, on one session.
    const newId = ulidGenerator();
    const placer = createPlacer();
    const deps = (q: Queryable): ServiceDeps => ({ db: sessionDb(q), clock: () => new Date(), newId, placer });
    const deep: Record<string, string> = { [NONE]: bulkId('01N0', OPEN - PAGE), [MANY]: bulkId('01H1', Math.floor(released / 2)) };
    const routes = {
      'GET /quota': { path: () => '/quota', read: (t: string) => (q: Queryable) => getQuota(deps(q), t) },
      'GET /requests (first page)': { path: () => `/requests?limit=${PAGE}`, read: (t: string) => (q: Queryable) => listAdmissions(deps(q), t, { limit: PAGE }) },
      'GET /requests (deep page)': { path: (t: string) => `/requests?limit=${PAGE}&cursor=${deep[t]}`, read: (t: string) => (q: Queryable) => listAdmissions(deps(q), t, { limit: PAGE, cursor: deep[t] }) },
    };
    const reads: Record<string, [none: number, many: number]> = {};
    for (const [name, r] of Object.entries(routes)) reads[name] = [await rowsRead(ledger.db, r.read(NONE)), await rowsRead(ledger.db, r.read(MANY))];

    // The same routes through the Worker, alternated: with none released, with many.
    const worker = await ctx.worker(ledger.url, { [NONE]: keyOf(NONE), [MANY]: keyOf(MANY) });
    const call = (tenant: string, path: string) => async () => {
      const res = await fetch(`${worker.url}${path}`, { headers: { authorization: `Bearer ${keyOf(tenant)}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path} as ${tenant} answered ${res.status}: ${text.slice(0, 300)}`);
    };
    const latency: Record<string, [none: LatencySummary, many: LatencySummary]> = {};
    for (const [name, r] of Object.entries(routes)) {
      const paths = { none: call(NONE, r.path(NONE)), many: call(MANY, r.path(MANY)) };
      await interleaved(paths, { concurrency: CONCURRENCY, total: 8, rounds: 2 }); // warm-up
      const res = await interleaved(paths, { concurrency: CONCURRENCY, total: n, rounds: ROUNDS });
      latency[name] = [summarize(res.none.latenciesMs, res.none.wallMs), summarize(res.many.latenciesMs, res.many.wallMs)];
    }

    const ratios = Object.fromEntries(Object.entries(latency).map(([k, [none, many]]) => [k, ratio(many.p50, none.p50)]));
    const readRatios = Object.fromEntries(Object.entries(reads).map(([k, [none, many]]) => [k, ratio(many, none)]));
    const worst = Math.max(...Object.values(ratios));
    const short = (k: string) => k.replace('GET ', '').replace('/requests (first page)', 'list').replace('/requests (deep page)', 'deep page');
    return {
      summary:
        `ratio=${fmt(worst)} (p50 with ${released} released / with none, worst of ${Object.entries(ratios).map(([k, v]) => `${short(k)} ${fmt(v)}`).join(', ')}; goal ≤ ${GOAL}: ${verdict(worst, GOAL, false)}) ` +
        `rows read with/without: ${Object.entries(readRatios).map(([k, v]) => `${short(k)} ${fmt(v)}`).join(', ')}, sweep page ${fmt(ratio(sweepAfter, sweepBefore))}`,
      details: [
        `Two tenants with the same ${OPEN} open (ready) reservations; one also has ${released} released ones, older. Through the Worker (wrangler dev), concurrency ${CONCURRENCY}, ${n} requests per route and tenant in ${ROUNDS} alternating rounds. The deep page's cursor is in the middle of the history (its ${Math.floor(released / 2)}th released reservation; for the tenant without history, its ${OPEN - PAGE}th open one): both pages hold ${PAGE} admissions.`,
        '',
        '| route | no released | with released | p50 ratio | rows read (Handler_read_*) none / with | rows ratio |',
        '|---|---|---|---|---|---|',
        ...Object.entries(latency).map(([k, [none, many]]) => `| ${k} | ${describe(none)} | ${describe(many)} | ${fmt(ratios[k] ?? NaN)} | ${reads[k]?.[0]} / ${reads[k]?.[1]} | ${fmt(readRatios[k] ?? NaN)} |`),
        `| cron sweep, one page of ${PAGE} (statement only) | | | | ${sweepBefore} / ${sweepAfter} | ${fmt(ratio(sweepAfter, sweepBefore))} |`,
        '',
        `The sweep's "none" is the same ledger before the released reservations were written: with an outbox of ${2 * OPEN} rows MariaDB reads it by another plan than with ${2 * OPEN + 2 * released} (fewer rows read with the history is that, not a cheaper page).`,
      ],
    };
  },
};
