// B8 ledger at scale: N open reservations (10,000; 500 in a quick run) in one tenant — made by
// the Worker's own admit() (through mysql2, for speed), then set `ready` and not reconciled for a
// long time, their create rows acknowledged. Measured, with every statement counted by a proxy in
// front of ps-http-sim:
// - the cron sweep (the real Worker's scheduled() in workerd): statements and time per run,
//   against its budget RECONCILE_MAX_STATEMENTS, and how many runs cover all N;
// - the controller's periodic resync (controller/reservation/resync.ts resyncOnce, the code the
//   controller runs every LEDGER_RESYNC_MS = 60 s by default): statements, time and reservations
//   enqueued per pass — i.e. per minute at the default period.
// Not measured here: what the reconciles of those enqueued reservations then cost (they need a
// CR per reservation: 10,000 ModelServices); docs/ledger.md has the per-reservation statements.
import { randomUUID } from 'node:crypto';
import { resyncOnce } from '../controller/reservation/resync.ts';
import { admit } from '../functions/services/admit.ts';
import { createDb } from '../ledger/db.ts';
import { startLossyProxy } from '../test/support/lossy-proxy.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { startApi, TENANT } from './lib/api.ts';
import { wranglerToml } from './lib/workerd-worker.ts';
import { closedLoop } from './lib/load.ts';
import { fmt, ratio, verdict } from './lib/stats.ts';
import { ledgerShards } from '../ledger/shards.ts';

export const b8: Benchmark = {
  id: 'B8',
  title: 'ledger at scale (open reservations)',
  alongside: 'B5', // no Kubernetes, its own ledger: B5's counts cannot see it; judged on statements, not time
  async run(ctx) {
    const n = ctx.quick ? 500 : 10_000;
    const api = await startApi(ctx, 16, { direct: false });
    const t0 = performance.now();
    await closedLoop({ concurrency: 16, total: n, op: async () => void (await admit(api.b, { tenant: TENANT, idempotencyKey: api.newKey(), requestId: randomUUID(), parsed: api.parsed })) });
    await api.b.db.execute(`UPDATE reservation SET state = 'ready', last_reconciled_at = '2000-01-01 00:00:00.000' WHERE tenant = ?`, [TENANT]);
    await api.b.db.execute(`UPDATE outbox o JOIN reservation r ON r.id = o.reservation_id SET o.done_at = UTC_TIMESTAMP(3) WHERE r.tenant = ? AND o.done_at IS NULL`, [TENANT]);
    ctx.log(`B8: ${n} open reservations made in ${fmt((performance.now() - t0) / 1000)} s`);

    // The cron sweep, in workerd, through a counting proxy.
    const proxy = await startLossyProxy(api.ledger.url);
    ctx.defer(() => proxy.close());
    const worker = await ctx.worker(proxy.url, { [TENANT]: 'bench-b8-key-0123456789' });
    const budget = Number(wranglerToml().vars.RECONCILE_MAX_STATEMENTS ?? 40);
    const runs: Array<{ statements: number; ms: number; enqueued: number }> = [];
    const reconcileRows = async () => Number((await api.b.db.execute(`SELECT COUNT(*) AS n FROM outbox o JOIN reservation r ON r.id = o.reservation_id WHERE r.tenant = ? AND o.kind = 'reconcile'`, [TENANT])).rows[0]?.n ?? 0);
    let covered = 0;
    for (let i = 0; i < 8 && covered < n; i++) {
      const s0 = proxy.statements.length;
      const e0 = await reconcileRows();
      const t = performance.now();
      const status = await worker.scheduled('*/5 * * * *', Date.UTC(2030, 0, 1, 0, 5 * i));
      if (status !== 200) throw new Error(`scheduled() answered ${status}`);
      const enqueued = (await reconcileRows()) - e0;
      covered += enqueued;
      runs.push({ statements: proxy.statements.length - s0, ms: performance.now() - t, enqueued });
    }

    // The controller's resync pass.
    const rproxy = await startLossyProxy(api.ledger.url);
    ctx.defer(() => rproxy.close());
    let enqueued = 0;
    const t = performance.now();
    const pass = await resyncOnce({ cluster: 'default', shards: () => ledgerShards(createDb({ url: rproxy.url })), enqueue: () => enqueued++, pageSize: 500, now: () => new Date() }, new AbortController().signal);
    const resyncMs = performance.now() - t;
    const resyncStatements = rproxy.statements.length;

    const maxStatements = Math.max(...runs.map((r) => r.statements));
    const r = ratio(maxStatements, budget);
    return {
      summary: `ratio=${fmt(r)} (sweep statements per run / budget ${budget}; ≤ 1: ${verdict(r, 1, false)}) ${n} open: sweep ${fmt(runs.reduce((a, x) => a + x.ms, 0) / runs.length)} ms/run, ${fmt(runs[0]?.enqueued ?? 0)} enqueued per run, ${runs.length} runs to cover ${fmt(covered)}; resync ${resyncStatements} statements, ${fmt(resyncMs)} ms, ${enqueued} reservations enqueued per pass (= per minute at LEDGER_RESYNC_MS 60 s)`,
      details: [
        `${n} open reservations (state ready, last reconciled long ago) in one tenant.`,
        '',
        '| sweep run | statements | ms | reconcile rows enqueued |',
        '|---|---|---|---|',
        ...runs.map((x, i) => `| ${i + 1} | ${x.statements} | ${fmt(x.ms)} | ${x.enqueued} |`),
        '',
        `Controller resync pass (page 500): ${resyncStatements} statements (${pass.pages} pages), ${fmt(resyncMs)} ms, ${enqueued} reservations enqueued. With the default LEDGER_RESYNC_MS (60 s) that is the cost per minute; each enqueued reservation is then reconciled (a delivered/ready one is decided on the informer cache, API reads only through LEDGER_READ_QPS) — that part is not measured here.`,
      ],
    };
  },
};
