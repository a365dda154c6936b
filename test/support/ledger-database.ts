// Shared set-up of the ledger suites (and of bench/): a migrated ledger, tenants with quotas, and
// helpers to read the ledger directly. Two backends (MODELDOCK_LEDGER_BACKEND): `mariadb`
// (default) — a database of its own per call, behind a ps-http-sim of its own — or `vitess` — THE
// 2-shard Vitess ledger of the run (vtgate behind ps-http-sim, transaction mode SINGLE), emptied
// for the suite: its project runs one suite at a time (vitest.config.ts), so an emptied ledger is
// the suite's own.
import { createHash } from 'node:crypto';
import { inject } from 'vitest';
import { connect } from '@planetscale/database';
import { createDb, type Db, type DbFetch, type SqlArg } from '../../ledger/db.ts';
import type { ServiceDeps } from '../../functions/services/deps.ts';
import { ulidGenerator } from '../../functions/services/deps.ts';
import { migrate } from '../../ledger/migrate.ts';
import { LEDGER_TABLES } from '../../ledger/rows.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { parseLimits, setTenantQuota } from '../../scripts/tenant.ts';
import type { VitessInfo } from '../../scripts/testenv/vitess.ts';
import { createTestDatabase, type DatabaseStack, type TestDatabase } from './test-database.ts';
import { createPlacer } from '../../ledger/placement.ts';

export type LedgerBackend = 'mariadb' | 'vitess';
export const ledgerBackend = (env: NodeJS.ProcessEnv = process.env): LedgerBackend => (env.MODELDOCK_LEDGER_BACKEND === 'vitess' ? 'vitess' : 'mariadb');

export interface LedgerDatabase extends TestDatabase {
  backend: LedgerBackend;
  db: Db;
  deps(opts?: { fetch?: DbFetch; clock?: () => Date }): ServiceDeps;
  setQuota(tenant: string, ...limits: string[]): Promise<void>;
  count(sql: string, args?: readonly SqlArg[]): Promise<number>;
  /** A test fixture's write that names no tenant: run on every shard (the database itself on MariaDB). */
  onEveryShard(sql: string, args?: readonly SqlArg[]): Promise<void>;
  /** A fingerprint of every ledger table: equal fingerprints ⇒ no row changed. */
  fingerprint(): Promise<string>;
}

/** Tables on the tenant's shard (the rest of LEDGER_TABLES is global). */
const SHARDED_TABLES = ['tenant_quota', 'reservation', 'binding', 'outbox', 'quota_movement', 'reservation_change', 'tenant_fence', 'cluster_allotment', 'allotment_log', 'tenant_affinity', 'placement'] as const;
/** The global keyspace's tables a suite empties (the epoch is reset, the outbox sequence kept). */
const GLOBAL_TABLES = ['scheduled_run', 'cluster', 'cluster_audit', 'allotment_move'] as const;

export async function createLedgerDatabase(stack?: DatabaseStack): Promise<LedgerDatabase> {
  if (ledgerBackend() === 'vitess') return vitessLedgerDatabase(vitessOfRun());
  const t = await createTestDatabase(stack);
  const db = createDb({ url: t.url });
  await migrate(db);
  return ledgerDatabase({ ...t, backend: 'mariadb' }, db);
}

/** The run's Vitess ledger: from the full stack (started with `vitess`) or the ledger-only one. */
function vitessOfRun(): VitessInfo {
  const info = inject('stack')?.vitess ?? inject('ledgerStack')?.vitess;
  if (!info) throw new Error('MODELDOCK_LEDGER_BACKEND=vitess, but this project started no Vitess ledger (vitest.config.ts)');
  return info;
}

/**
 * Empties a ledger: the run's Vitess ledger (migrated once by the global setup), so a suite does not
 * see the rows of the suites before it, or a suite's MariaDB database between its tests (one shard):
 * shard by shard (a DELETE naming no tenant would reach both shards, which transaction mode SINGLE
 * refuses), and the epoch as a fresh migration leaves it.
 */
export async function emptyLedger(db: Db): Promise<void> {
  for (const shard of await ledgerShards(db)) {
    for (const table of SHARDED_TABLES) await shard.db.execute(`DELETE FROM ${table}`);
  }
  for (const table of GLOBAL_TABLES) await db.execute(`DELETE FROM ${table}`);
  await db.execute("UPDATE controller_epoch SET epoch = 0, holder = '' WHERE id = 1");
}

async function vitessLedgerDatabase(info: VitessInfo): Promise<LedgerDatabase> {
  const db = createDb({ url: info.databaseUrl });
  await emptyLedger(db);
  const t: TestDatabase = { name: 'vitess', url: info.databaseUrl, conn: connect({ url: info.databaseUrl }), drop: async () => undefined };
  return ledgerDatabase({ ...t, backend: 'vitess' }, db);
}

function ledgerDatabase(t: TestDatabase & { backend: LedgerBackend }, db: Db): LedgerDatabase {
  const newId = ulidGenerator();
  return {
    ...t,
    db,
    deps: (opts = {}) => ({ db: createDb({ url: t.url, ...(opts.fetch ? { fetch: opts.fetch } : {}) }), clock: opts.clock ?? (() => new Date()), newId, placer: createPlacer() }),
    setQuota: (tenant, ...limits) => setTenantQuota(db, tenant, parseLimits(limits)),
    async count(sql, args = []) {
      const r = await db.execute(sql, args);
      return Number(Object.values(r.rows[0] ?? {})[0] ?? 0);
    },
    async onEveryShard(sql, args = []) {
      for (const shard of await ledgerShards(db)) await shard.db.execute(sql, args);
    },
    async fingerprint() {
      // Every row of every table, hashed (CHECKSUM TABLE is not a statement vtgate knows).
      const parts: string[] = [];
      for (const table of LEDGER_TABLES) {
        const rows = (await db.execute(`SELECT * FROM ${table}`)).rows.map((row) => JSON.stringify(Object.entries(row).sort(([a], [b]) => a.localeCompare(b))));
        rows.sort();
        parts.push(`${table}:${rows.length}:${createHash('sha256').update(rows.join('\n')).digest('hex').slice(0, 16)}`);
      }
      return parts.join(' ');
    },
  };
}
