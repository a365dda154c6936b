// Shared set-up of the admission suites: a migrated test database, tenants with quotas, and
// helpers to read the ledger directly.
import { createDb, type Db, type DbFetch, type SqlArg } from '../../ledger/db.ts';
import type { ServiceDeps } from '../../functions/services/deps.ts';
import { ulidGenerator } from '../../functions/services/deps.ts';
import { migrate } from '../../ledger/migrate.ts';
import { LEDGER_TABLES } from '../../ledger/rows.ts';
import { parseLimits, setTenantQuota } from '../../scripts/tenant.ts';
import { createTestDatabase, type DatabaseStack, type TestDatabase } from './db.ts';

export interface LedgerDatabase extends TestDatabase {
  db: Db;
  deps(opts?: { fetch?: DbFetch; clock?: () => Date }): ServiceDeps;
  setQuota(tenant: string, ...limits: string[]): Promise<void>;
  count(sql: string, args?: readonly SqlArg[]): Promise<number>;
  /** A fingerprint of every ledger table: equal fingerprints ⇒ no row changed. */
  fingerprint(): Promise<string>;
}


export async function createLedgerDatabase(stack?: DatabaseStack): Promise<LedgerDatabase> {
  const t = await createTestDatabase(stack);
  const db = createDb({ url: t.url });
  await migrate(db);
  const newId = ulidGenerator();
  return {
    ...t,
    db,
    deps: (opts = {}) => ({ db: createDb({ url: t.url, ...(opts.fetch ? { fetch: opts.fetch } : {}) }), clock: opts.clock ?? (() => new Date()), newId }),
    setQuota: (tenant, ...limits) => setTenantQuota(db, tenant, parseLimits(limits)),
    async count(sql, args = []) {
      const r = await db.execute(sql, args);
      return Number(Object.values(r.rows[0] ?? {})[0] ?? 0);
    },
    async fingerprint() {
      const parts: string[] = [];
      for (const table of LEDGER_TABLES) {
        const r = await db.execute(`CHECKSUM TABLE ${table}`);
        const n = await db.execute(`SELECT COUNT(*) AS n FROM ${table}`);
        parts.push(`${table}:${String(r.rows[0]?.Checksum)}:${String(n.rows[0]?.n)}`);
      }
      return parts.join(' ');
    },
  };
}
