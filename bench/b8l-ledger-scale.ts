// B8L ledger at scale on both backends: 100,000 open reservations (2,000 in a quick run) in 8
// tenants — on MariaDB through ps-http-sim, and on the 2-shard Vitess ledger (vtcombo) through
// ps-http-sim, 4 tenants on each shard, the same tenants and rows on both (one real admission per
// tenant, copied in bulk: fillOpenReservations). Measured per backend, every statement counted by
// a proxy in front of ps-http-sim that also tells the shard it ran on (lib/shard-statements.ts):
// - the cron sweep (the real Worker's scheduled() in workerd), run after run until every open
//   reservation has its reconcile row: statements against its budget RECONCILE_MAX_STATEMENTS,
//   time, rows enqueued and rows MariaDB read per run;
// - the controller's resync pass (resyncOnce, page LEDGER_RESYNC_PAGE = 500): statements, pages,
//   time, reservations enqueued, rows read.
// On Vitess, both per shard. Only with `--only B8L` (its own stack): B8 keeps 10,000 on MariaDB in
// the default suite. Goal: the same budget on both backends (ratio = worst run / budget ≤ 1).
import { escape } from 'mysql2';
import { resyncOnce } from '../controller/reservation/resync.ts';
import { parseConfig } from '../functions/config.ts';
import { admit } from '../functions/services/admit.ts';
import { ulidGenerator } from '../functions/services/deps.ts';
import { str } from '../ledger/columns.ts';
import { createDb, type Db } from '../ledger/db.ts';
import { ledgerShards } from '../ledger/shards.ts';
import { admissionRequestSchema, toAdmission, type ParsedAdmission } from '../schema/admission.ts';
import { adminSql, mysqlFromEnv } from '../scripts/testenv/mariadb.ts';
import { socketSql, startVitessLedger, type VitessInfo } from '../scripts/testenv/vitess.ts';
import { parseLimits, setTenantQuota } from '../scripts/tenant.ts';
import type { Benchmark } from './lib/benchmark.ts';
import type { BenchContext } from './lib/context.ts';
import { BODY } from './lib/api.ts';
import { mysqlDb, type MysqlDb } from './lib/db.ts';
import { startStatementProxy } from './lib/shard-statements.ts';
import { fmt, ratio, sum, verdict } from './lib/stats.ts';
import { wranglerToml } from './lib/workerd-worker.ts';
import { createPlacer } from '../ledger/placement.ts';

const TENANTS = 8;
const RESYNC_PAGE = 500;
const CRON = '*/5 * * * *';

export const b8l: Benchmark = {
  id: 'B8L',
  title: 'ledger at scale on both backends (open reservations)',
  alone: {}, // not in the default run (B8 is): `--only B8L`
  async run(ctx) {
    const n = ctx.quick ? 2_000 : 100_000;
    const budget = Number(wranglerToml().vars.RECONCILE_MAX_STATEMENTS ?? 40);
    const vitess = await vitessBackend(ctx, TENANTS);
    const mariadb = await mariadbBackend(ctx);
    const parsed = parsedBody(mariadb.url);
    const measured: Measured[] = [];
    for (const b of [mariadb, vitess]) measured.push(await measure(ctx, b, vitess.tenants, n, parsed));
    return {
      summary: summarize(measured, n, TENANTS, budget),
      details: [
        `${n} open reservations (state ready, last reconciled long ago, create row acknowledged) in ${TENANTS} tenants, ${n / TENANTS} each, the same tenants on both backends; on Vitess ${vitess.shards.map((s) => `${[...vitess.shardOfTenant.values()].filter((x) => x === s).length} tenants on ${s}`).join(', ')}.`,
        `The rows: per tenant ONE admission through the Worker's admit() (the production driver, through ps-http-sim), set ready and its create row acknowledged (B8's shape); its reservation, quota_movement and outbox rows copied with fresh ULIDs in multi-row INSERTs (1,000 rows each) straight to the backing database (mysql2 → MariaDB; mysql2 → vtgate's MySQL port, which routes each single-tenant INSERT to its shard and numbers outbox.seq from its sequence); the tenant's usage set to what its admissions hold; then ANALYZE TABLE.`,
        `Statements: round trips through ps-http-sim, counted by a proxy in front of it (a shard-targeted statement's session starts with \`USE \\\`ledger:<shard>\\\`\`; a routed one names its tenant; \`vtgate\`: neither — scheduled_run in the global keyspace, SHOW VITESS_SHARDS). "Worker's own": the count the sweep itself wrote into scheduled_run. Rows read: INFORMATION_SCHEMA.TABLE_STATISTICS.ROWS_READ (MariaDB's userstat) of the ledger's sharded tables, per shard schema; the Vitess shards' tablets share one private MariaDB (innodb_buffer_pool_size 64M, the test stack's), the MariaDB backend is the stack's server.`,
        '',
        ...measured.flatMap((m) => reportBackend(m, budget)),
      ],
    };
  },
};

/** The benchmark's admission body, parsed by the Worker's own policy (as bench/lib/api.ts does). */
function parsedBody(databaseUrl: string): ParsedAdmission {
  const config = parseConfig({ DATABASE_URL: databaseUrl, ALLOWED_IMAGE_REGISTRIES: 'ghcr.io/acme' });
  const decision = toAdmission(admissionRequestSchema(config.maxReplicas).parse(BODY), config.policy);
  if (!decision.ok) throw new Error(`B8L body refused: ${JSON.stringify(decision.issues)}`);
  return decision.admission;
}

async function measure(ctx: BenchContext, b: Backend, tenants: readonly string[], n: number, parsed: ParsedAdmission): Promise<Measured> {
  const t0 = performance.now();
  await fillOpenReservations({ db: b.db, bulk: b.bulk, tenants, perTenant: n / tenants.length, parsed, batch: 1000 });
  await b.analyze();
  const fillMs = performance.now() - t0;
  const open = Number((await b.bulk.execute(`SELECT COUNT(*) AS n FROM reservation WHERE tenant IN (?) AND state = 'ready'`, [[...tenants]])).rows[0]?.n ?? 0);
  if (open !== n) throw new Error(`B8L ${b.name}: ${open} open reservations made, not ${n}`);
  ctx.log(`B8L ${b.name}: ${n} open reservations made in ${fmt(fillMs / 1000)} s`);

  // The cron sweep, in workerd, through the counting proxy, until every reservation has its row.
  const proxy = await startStatementProxy(b.url, b.shardOfTenant, b.untargeted);
  ctx.defer(() => proxy.close());
  const worker = await ctx.worker(proxy.url, { [tenants[0] ?? 'b8l']: 'bench-b8l-key-0123456789' });
  const sweep: Measured['sweep'] = [];
  let covered = 0;
  for (let i = 0; covered < n && i < Math.ceil(n / 500) + 5; i++) {
    const at = Date.UTC(2030, 0, 1, 0, 5 * i);
    const [s0, r0] = [proxy.counts(), await b.rowsRead()];
    const t = performance.now();
    const status = await worker.scheduled(CRON, at);
    const ms = performance.now() - t;
    const [s1, r1] = [proxy.counts(), await b.rowsRead()];
    if (status !== 200) throw new Error(`B8L ${b.name}: scheduled() answered ${status}`);
    const own = (await b.db.execute('SELECT statements, enqueued FROM scheduled_run WHERE cron = ? AND scheduled_ms = ?', [CRON, at])).rows[0];
    const enqueued = Number(own?.enqueued ?? 0);
    const byShard = minus(s1, s0);
    sweep.push({ statements: sum([...byShard.values()]), own: Number(own?.statements ?? NaN), ms, enqueued, byShard, rowsRead: minus(r1, r0) });
    covered += enqueued;
    if (enqueued === 0) break;
  }
  ctx.log(`B8L ${b.name}: ${sweep.length} sweep runs enqueued ${covered}`);

  // The controller's resync pass.
  const rproxy = await startStatementProxy(b.url, b.shardOfTenant, b.untargeted);
  ctx.defer(() => rproxy.close());
  const r0 = await b.rowsRead();
  const t = performance.now();
  const pass = await resyncOnce({ cluster: 'default', shards: () => ledgerShards(createDb({ url: rproxy.url })), enqueue: () => undefined, pageSize: RESYNC_PAGE, now: () => new Date() }, new AbortController().signal);
  const ms = performance.now() - t;
  const byShard = rproxy.counts();
  const resync = { statements: sum([...byShard.values()]), pages: pass.pages, ms, enqueued: pass.enqueued, byShard, rowsRead: minus(await b.rowsRead(), r0), pageSize: RESYNC_PAGE };
  return { backend: b, n, fillMs, covered, sweep, resync };
}

function minus(after: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

// The rows. Each tenant gets ONE real admission (the Worker's own admit() through the backend's
// production path), set `ready`, not reconciled for a long time and its create row acknowledged
// (B8's shape); its rows — reservation, quota_movement, outbox — are the template the rest are
// copied from, in multi-row INSERTs straight to the backing database (mysql2: to MariaDB, or to
// vtgate's MySQL port, which routes each statement to the tenant's shard and takes outbox.seq from
// its sequence). A copy differs from the template only in its id (every value holding the
// template's id: reservation_id, dedupe_key, …) and its Idempotency-Key; the tenant's usage is then
// what `perTenant` admissions hold.

/** Far above what the copies hold (100m / 128 MiB / 1 modelservices each). */
const LIMITS = ['cpu=100000', 'memory=100000Gi', 'nvidia.com/gpu=0', 'modelservices=1000000'];
/** Long ago: every copy is stale for the sweep and open for the resync. */
const LONG_AGO = '2000-01-01 00:00:00.000';

interface FillOptions {
  /** The backend's own Db (@planetscale/database through ps-http-sim): quotas and the template admissions. */
  db: Db;
  /** mysql2 straight to the backing database (MariaDB, or vtgate): the copies. */
  bulk: MysqlDb;
  tenants: readonly string[];
  perTenant: number;
  parsed: ParsedAdmission;
  /** Rows per INSERT. */
  batch: number;
}

/** Fills every tenant with `perTenant` open reservations (the tenants must be new to the ledger). */
async function fillOpenReservations(o: FillOptions): Promise<void> {
  const newId = ulidGenerator();
  await Promise.all(o.tenants.map((t) => fillTenant(o, t, newId)));
}

async function fillTenant(o: FillOptions, tenant: string, newId: (now: Date) => string): Promise<void> {
  await setTenantQuota(o.db, tenant, parseLimits(LIMITS));
  const { admission } = await admit({ db: o.db, clock: () => new Date(), newId, placer: createPlacer() }, { tenant, idempotencyKey: 'b8l-template', requestId: 'b8l-template', parsed: o.parsed });
  const id = admission.id;
  const at = [tenant, id];
  await o.bulk.execute(`UPDATE reservation SET state = 'ready', last_reconciled_at = ? WHERE tenant = ? AND id = ?`, [LONG_AGO, ...at]);
  await o.bulk.execute(`UPDATE outbox SET done_at = UTC_TIMESTAMP(3) WHERE tenant = ? AND reservation_id = ?`, at);
  const templates = {
    reservation: await one(o.bulk, 'SELECT * FROM reservation WHERE tenant = ? AND id = ?', at),
    quota_movement: await one(o.bulk, 'SELECT * FROM quota_movement WHERE tenant = ? AND reservation_id = ?', at),
    // seq is the database's (AUTO_INCREMENT on MariaDB, vtgate's sequence on Vitess).
    outbox: withoutColumn(await one(o.bulk, 'SELECT * FROM outbox WHERE tenant = ? AND reservation_id = ?', at), 'seq'),
  };
  const now = new Date();
  for (let from = 1; from < o.perTenant; from += o.batch) {
    const copies = Array.from({ length: Math.min(o.batch, o.perTenant - from) }, (_, i) => ({ id: newId(now), n: from + i }));
    for (const [table, row] of Object.entries(templates)) {
      const columns = Object.keys(row);
      const values = copies.map((c) => `(${columns.map((col) => escape(copyValue(col, row[col], id, c))).join(', ')})`);
      await o.bulk.execute(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(',\n')}`);
    }
  }
  // The tenant's usage was one admission's (a new tenant): now it is perTenant admissions'.
  await o.bulk.execute('UPDATE tenant_quota SET used = used * ? WHERE tenant = ?', [o.perTenant, tenant]);
}

/** The template's value for the copy `c`: its id wherever the template's id was, its own Idempotency-Key. */
function copyValue(column: string, value: unknown, templateId: string, c: { id: string; n: number }): string | number | null {
  if (column === 'idempotency_key') return `b8l-${c.n}`;
  if (typeof value === 'string') return value.split(templateId).join(c.id);
  if (value === null || typeof value === 'number') return value;
  // A JSON column read back parsed (mysql2 does for MySQL's JSON type): written back as text.
  if (typeof value === 'object' && !Buffer.isBuffer(value)) return JSON.stringify(value);
  throw new Error(`B8L: cannot copy ${column} (${typeof value})`);
}

async function one(db: MysqlDb, sql: string, args: string[]): Promise<Record<string, unknown>> {
  const row = (await db.execute(sql, args)).rows[0];
  if (!row) throw new Error(`B8L: no template row for ${sql} ${args.join(' ')}`);
  return row;
}

function withoutColumn(row: Record<string, unknown>, column: string): Record<string, unknown> {
  const { [column]: _dropped, ...rest } = row;
  return rest;
}

// The two ledgers: MariaDB (a database of its own behind its own ps-http-sim, as B8's) and the
// 2-shard Vitess ledger (vtcombo: vtgate and both shards' tablets behind ps-http-sim, transaction
// mode SINGLE — the `vitess` test project's, started here). For each: the production Db, mysql2
// straight to the backing database (the bulk rows), and the rows MariaDB read per shard —
// INFORMATION_SCHEMA.TABLE_STATISTICS (MariaDB's userstat, on for the run and back as it was
// after), summed over the ledger's sharded tables of each shard's schema (`vt_ledger_-80`,
// `vt_ledger_80-`: both shards' tablets share one MariaDB).

interface Backend {
  name: 'mariadb' | 'vitess';
  /** DATABASE_URL of its ps-http-sim. */
  url: string;
  db: Db;
  bulk: MysqlDb;
  /** Where a statement can run: the shards in order; `untargeted` for what runs on none (vtgate, the global keyspace). */
  shards: string[];
  untargeted: string;
  /** The shard a tenant's rows live on (empty on MariaDB: one database). */
  shardOfTenant: ReadonlyMap<string, string>;
  /** Rows read so far by shard (TABLE_STATISTICS.ROWS_READ of the ledger's sharded tables). */
  rowsRead(): Promise<Map<string, number>>;
  /** ANALYZE TABLE of the filled tables, as a ledger that grew over time has its statistics. */
  analyze(): Promise<void>;
}

/** The tables on a tenant's shard (ledger.json); scheduled_run and the epoch are global. */
const SHARDED = ['tenant_quota', 'reservation', 'binding', 'outbox', 'quota_movement', 'reservation_change', 'tenant_fence'];
const BULK_CONNECTIONS = 8;

async function mariadbBackend(ctx: BenchContext): Promise<Backend> {
  const ledger = await ctx.ledger();
  const bulk = mysqlDb(ctx.stack.mysql, ledger.name, BULK_CONNECTIONS);
  ctx.defer(() => bulk.close());
  const admin = mysqlFromEnv();
  const rowsRead = await tableStatistics((sql) => adminSql(admin, sql), new Map([[ledger.name, 'mariadb']]), ctx);
  return {
    name: 'mariadb',
    url: ledger.url,
    db: ledger.db,
    bulk,
    shards: ['mariadb'],
    untargeted: 'mariadb',
    shardOfTenant: new Map(),
    rowsRead,
    analyze: async () => void (await bulk.execute('ANALYZE TABLE reservation, outbox, quota_movement, tenant_quota')),
  };
}

/** Starts the Vitess ledger (stopped at cleanup); `tenants` are chosen so that each shard holds as many. */
async function vitessBackend(ctx: BenchContext, tenantCount: number): Promise<Backend & { tenants: string[] }> {
  const t0 = performance.now();
  const v = await startVitessLedger({ binDir: ctx.stack.binDir, runDir: ctx.stack.runDir, logDir: ctx.stack.logDir, log: ctx.log });
  ctx.defer(() => Promise.all(v.processes.reverse().map((p) => p.stop())));
  ctx.log(`B8L: Vitess ledger up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const db = createDb({ url: v.info.databaseUrl });
  const bulk = mysqlDb({ host: '127.0.0.1', port: v.info.vtgatePort, user: 'modeldock', password: 'modeldock' }, 'ledger', BULK_CONNECTIONS);
  ctx.defer(() => bulk.close());
  const shards = v.info.keyspaces.find((k) => k.name === 'ledger')?.shards ?? [];
  const shardOfTenant = await balancedTenants(db, shards, tenantCount);
  const schemas = new Map(shards.map((s) => [`vt_ledger_${s}`, s]));
  const rowsRead = await tableStatistics((sql) => socketSql(v.info.mysqlSocket, sql), schemas, ctx);
  return {
    name: 'vitess',
    url: v.info.databaseUrl,
    db,
    bulk,
    shards,
    untargeted: 'vtgate',
    shardOfTenant,
    tenants: [...shardOfTenant.keys()],
    rowsRead,
    analyze: () => analyzeShards(v.info, [...schemas.keys()]),
  };
}

/** `count` tenant names, as many on each shard (vtgate's own routing: VEXPLAIN QUERIES). */
async function balancedTenants(db: Db, shards: readonly string[], count: number): Promise<Map<string, string>> {
  const per = Math.ceil(count / shards.length);
  const chosen = new Map<string, string>();
  for (let i = 0; chosen.size < count && i < 100 * count; i++) {
    const tenant = `b8l-${i}`;
    const r = await db.execute('VEXPLAIN QUERIES SELECT resource FROM tenant_quota WHERE tenant = ?', [tenant]);
    const shard = str(r.rows[0]?.shard);
    if ([...chosen.values()].filter((s) => s === shard).length < per) chosen.set(tenant, shard);
  }
  if (chosen.size < count) throw new Error(`B8L: found only ${chosen.size} tenants spread over ${shards.join(', ')}`);
  return chosen;
}

async function analyzeShards(info: VitessInfo, schemas: readonly string[]): Promise<void> {
  const tables = schemas.flatMap((s) => ['reservation', 'outbox', 'quota_movement', 'tenant_quota'].map((t) => `\`${s}\`.${t}`));
  await socketSql(info.mysqlSocket, `ANALYZE TABLE ${tables.join(', ')}`);
}

/** Rows read per shard from TABLE_STATISTICS; userstat is on from here until cleanup, then as it was. */
async function tableStatistics(sql: (q: string) => Promise<string>, shardOfSchema: ReadonlyMap<string, string>, ctx: BenchContext): Promise<() => Promise<Map<string, number>>> {
  const was = (await sql('SELECT @@GLOBAL.userstat')).trim() === '1' ? 1 : 0;
  await sql('SET GLOBAL userstat = 1');
  ctx.defer(() => sql(`SET GLOBAL userstat = ${was}`));
  const list = (xs: Iterable<string>) => [...xs].map((x) => `'${x}'`).join(', ');
  return async () => {
    const out = await sql(
      `SELECT TABLE_SCHEMA, SUM(ROWS_READ) FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA IN (${list(shardOfSchema.keys())}) AND TABLE_NAME IN (${list(SHARDED)}) GROUP BY TABLE_SCHEMA`,
    );
    const read = new Map<string, number>([...shardOfSchema.values()].map((s) => [s, 0]));
    for (const line of out.split('\n').filter(Boolean)) {
      const [schema = '', rows = '0'] = line.split('\t');
      const shard = shardOfSchema.get(schema);
      if (shard !== undefined) read.set(shard, Number(rows));
    }
    return read;
  };
}

// The report: the summary line, one table per backend (sweep runs, the resync pass), and on
// Vitess one per shard.

/** Statements (round trips) and rows read, in total and by where they ran. */
interface Counted {
  statements: number;
  ms: number;
  byShard: ReadonlyMap<string, number>;
  rowsRead: ReadonlyMap<string, number>;
}

interface Measured {
  backend: { name: string; shards: readonly string[]; untargeted: string; shardOfTenant: ReadonlyMap<string, string> };
  n: number;
  fillMs: number;
  covered: number;
  /** One per sweep run; `own`: the statements the sweep itself counted (scheduled_run). */
  sweep: Array<Counted & { own: number; enqueued: number }>;
  resync: Counted & { pages: number; enqueued: number; pageSize: number };
}

const sharded = (m: Measured) => m.backend.shards.length > 1;
const worstRun = (m: Measured) => Math.max(...m.sweep.map((r) => r.statements));
const at = (map: ReadonlyMap<string, number>, k: string) => map.get(k) ?? 0;
const total = (runs: readonly Counted[], pick: (r: Counted) => ReadonlyMap<string, number>, k: string) => sum(runs.map((r) => at(pick(r), k)));

function summarize(measured: readonly Measured[], n: number, tenants: number, budget: number): string {
  const worst = Math.max(...measured.map(worstRun));
  const r = ratio(worst, budget);
  const parts = measured.map((m) => {
    const ms = m.sweep.map((x) => x.ms);
    const base =
      `${m.backend.name}${sharded(m) ? ` (${m.backend.shards.length} shards)` : ''}: sweep ≤ ${worstRun(m)} statements/run, ${fmt(sum(ms) / ms.length)} ms/run (max ${fmt(Math.max(...ms))}), ` +
      `${fmt(m.sweep[0]?.enqueued ?? 0)} enqueued per run, ${m.sweep.length} runs to cover ${m.covered}; resync ${m.resync.statements} statements (${m.resync.pages} pages), ${fmt(m.resync.ms)} ms, ${m.resync.enqueued} enqueued`;
    if (!sharded(m)) return base;
    const shards = m.backend.shards;
    const per = (pick: (s: string) => number) => shards.map((s) => fmt(pick(s))).join(' / ');
    return (
      `${base}; per shard ${shards.join(' / ')} (+ ${m.backend.untargeted}): sweep statements ${per((s) => total(m.sweep, (x) => x.byShard, s))} (+ ${total(m.sweep, (x) => x.byShard, m.backend.untargeted)}) in all runs, ` +
      `rows read ${per((s) => total(m.sweep, (x) => x.rowsRead, s))}; resync statements ${per((s) => at(m.resync.byShard, s))} (+ ${at(m.resync.byShard, m.backend.untargeted)}), rows read ${per((s) => at(m.resync.rowsRead, s))}`
    );
  });
  return `ratio=${fmt(r)} (worst sweep statements per run / budget ${budget}, both backends; ≤ 1: ${verdict(r, 1, false)}) ${n} open in ${tenants} tenants — ${parts.join('; ')}`;
}

/** The runs shown: all of up to 12, else the first 3, every k-th and the last 2. */
function shownRuns(count: number): number[] {
  if (count <= 12) return Array.from({ length: count }, (_, i) => i);
  const step = Math.ceil(count / 6);
  const picked = new Set([0, 1, 2, count - 2, count - 1]);
  for (let i = step; i < count; i += step) picked.add(i);
  return [...picked].sort((a, b) => a - b);
}

function reportBackend(m: Measured, budget: number): string[] {
  const shards = m.backend.shards;
  const where = sharded(m) ? [...shards, m.backend.untargeted] : [];
  const perShard = (c: Counted) => (sharded(m) ? ` ${where.map((s) => at(c.byShard, s)).join(' / ')} | ${shards.map((s) => at(c.rowsRead, s)).join(' / ')} |` : '');
  const head = sharded(m) ? ` statements ${where.join(' / ')} | rows read ${shards.join(' / ')} |` : '';
  const rule = sharded(m) ? '---|---|' : '';
  const rowsRead = (c: Counted) => sum([...c.rowsRead.values()]);
  const runs = shownRuns(m.sweep.length);
  const lines = [
    `**${m.backend.name}**: ${m.n} open reservations made in ${fmt(m.fillMs / 1000)} s. The cron sweep, ${m.sweep.length} runs (budget ${budget} statements each) until ${m.covered} reconcile rows were enqueued${runs.length < m.sweep.length ? ` (runs ${runs.map((i) => i + 1).join(', ')} shown)` : ''}:`,
    '',
    `| sweep run | statements | Worker's own count | ms | reconcile rows enqueued | rows read |${head}`,
    `|---|---|---|---|---|---|${rule}`,
    ...runs.map((i) => {
      const x = m.sweep[i]!;
      return `| ${i + 1} | ${x.statements} | ${x.own} | ${fmt(x.ms)} | ${x.enqueued} | ${rowsRead(x)} |${perShard(x)}`;
    }),
  ];
  const all: Counted = {
    statements: sum(m.sweep.map((x) => x.statements)),
    ms: sum(m.sweep.map((x) => x.ms)),
    byShard: new Map(where.map((s) => [s, total(m.sweep, (x) => x.byShard, s)])),
    rowsRead: new Map(shards.map((s) => [s, total(m.sweep, (x) => x.rowsRead, s)])),
  };
  lines.push(`| all ${m.sweep.length} | ${all.statements} | ${sum(m.sweep.map((x) => x.own))} | ${fmt(all.ms)} | ${m.covered} | ${sum(m.sweep.map(rowsRead))} |${perShard(all)}`, '');
  const r = m.resync;
  lines.push(
    `The controller's resync pass (resyncOnce, page ${r.pageSize}):`,
    '',
    `| resync pass | statements | pages | ms | reservations enqueued | rows read |${head}`,
    `|---|---|---|---|---|---|${rule}`,
    `| 1 | ${r.statements} | ${r.pages} | ${fmt(r.ms)} | ${r.enqueued} | ${rowsRead(r)} |${perShard(r)}`,
    '',
  );
  if (!sharded(m)) return lines;
  const tenantsOn = (s: string) => [...m.backend.shardOfTenant.values()].filter((x) => x === s).length;
  const perTenant = m.n / m.backend.shardOfTenant.size;
  lines.push(
    'Per shard:',
    '',
    '| shard | tenants | open reservations | sweep statements (all runs) | sweep rows read (all runs) | resync statements | resync rows read |',
    '|---|---|---|---|---|---|---|',
    ...shards.map((s) => `| ${s} | ${tenantsOn(s)} | ${tenantsOn(s) * perTenant} | ${at(all.byShard, s)} | ${at(all.rowsRead, s)} | ${at(r.byShard, s)} | ${at(r.rowsRead, s)} |`),
    `| ${m.backend.untargeted} (no shard) | | | ${at(all.byShard, m.backend.untargeted)} | | ${at(r.byShard, m.backend.untargeted)} | |`,
    '',
  );
  return lines;
}
