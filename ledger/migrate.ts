// The migration library: applies ledger/sql/NNNN_*.sql in order, once each, recording every
// applied version (with its checksum) in schema_migrations. Idempotent: a second run applies
// nothing. A file whose checksum changed after it was applied is refused (add a new file).
// The command line is scripts/migrate.ts (`npm run migrate`).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';
import { ledgerShards } from './shards.ts';

/**
 * Marks a statement that only an unsharded database can run (a backfill joining two tables by a
 * non-sharding column): on a sharded keyspace the runner skips it. Such a statement must be a
 * no-op on every sharded ledger, i.e. only needed for rows written before the ledger was sharded
 * (the operator migrates BEFORE sharding, docs/planetscale.md).
 */
export const UNSHARDED_ONLY = '/* unsharded-only */';

/**
 * Marks a statement that touches rows of one tenant at a time (a join on the tenant), which vtgate
 * cannot route as one statement: on a sharded keyspace the runner sends it to each shard by itself
 * (shard-targeted); on one database it runs once.
 */
export const PER_SHARD = '/* per-shard */';

export const SQL_DIR = fileURLToPath(new URL('./sql/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  statements: string[];
}

/** Splits a migration into statements: `--` comment lines dropped, split at `;` ending a line. */
export function splitStatements(sql: string): string[] {
  const body = sql
    .split('\n')
    .filter((line) => !/^\s*--/.test(line))
    .join('\n');
  return body
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function loadMigrations(dir = SQL_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    return {
      version: Number(file.slice(0, 4)),
      name: file,
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: splitStatements(text),
    };
  });
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

export async function migrate(db: Db, migrations = loadMigrations()): Promise<MigrateResult> {
  await db.execute(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version INT NOT NULL,
       name VARCHAR(255) NOT NULL,
       checksum CHAR(64) NOT NULL,
       applied_at DATETIME(3) NOT NULL,
       PRIMARY KEY (version)
     ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  );
  const done = new Map<number, string>();
  for (const row of (await db.execute('SELECT version, checksum FROM schema_migrations')).rows) {
    done.set(Number(row.version), String(row.checksum));
  }
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  let sharded: boolean | undefined;
  for (const m of migrations) {
    const recorded = done.get(m.version);
    if (recorded !== undefined) {
      if (recorded !== m.checksum) {
        throw new Error(`migration ${m.name} changed after it was applied (checksum ${recorded.slice(0, 12)}… ≠ ${m.checksum.slice(0, 12)}…); add a new migration instead`);
      }
      result.alreadyApplied.push(m.name);
      continue;
    }
    // MySQL DDL is not transactional: every statement is re-runnable (IF NOT EXISTS / INSERT
    // IGNORE), and an ALTER … ADD that already took effect before a crash (duplicate column or
    // key name, errno 1060/1061) counts as applied, so an interrupted run can simply be repeated.
    for (const statement of m.statements) {
      if (statement.includes(UNSHARDED_ONLY) && (sharded ??= (await ledgerShards(db)).length > 1)) continue;
      try {
        if (statement.includes(PER_SHARD)) for (const shard of await ledgerShards(db)) await shard.db.execute(statement);
        else await db.execute(statement);
      } catch (err) {
        if (!(/^\s*ALTER\s+TABLE\b[\s\S]*\bADD\b/i.test(statement) && /errno 106[01]\b/.test(errorText(err)))) throw err;
      }
    }
    await db.execute('INSERT IGNORE INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))', [
      m.version,
      m.name,
      m.checksum,
    ]);
    result.applied.push(m.name);
  }
  return result;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
