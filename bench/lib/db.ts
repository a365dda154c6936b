// The benchmarks' database paths: the services' own Db (ledger/db.ts: @planetscale/database over
// HTTP to ps-http-sim) with every round trip counted, and baseline B — the same Db interface over
// mysql2 straight to MariaDB, so the SAME service code issues the SAME SQL without HTTP.
// mysql2 is a devDependency for this baseline only; its server errors are rethrown as the driver's
// typed DatabaseError with the errno in the message, as the HTTP driver reports them, so the
// ledger's checks (not Vitess: syntax error 1064; duplicate key 1062) read them the same way.
import { DatabaseError } from '@planetscale/database';
import { createPool, type Pool, type PoolConnection, type ResultSetHeader } from 'mysql2/promise';
import type { Db, ExecResult, Queryable, Row, SqlArg } from '../../ledger/db.ts';
import type { MysqlTarget } from '../../scripts/testenv/mariadb.ts';

/** Wraps a Db; `roundTrips` counts every execute plus BEGIN and COMMIT of each transaction (its shard sessions' too). */
export function countingDb(inner: Db, counter = { roundTrips: 0 }): Db & { roundTrips: number } {
  const wrapQ = (q: Queryable): Queryable => ({
    execute: (sql, args) => {
      counter.roundTrips++;
      return q.execute(sql, args);
    },
  });
  const db: Db & { roundTrips: number } = {
    get roundTrips() {
      return counter.roundTrips;
    },
    execute: (sql, args) => wrapQ(inner).execute(sql, args),
    transaction: (fn) => {
      counter.roundTrips += 2;
      return inner.transaction((tx) => fn(wrapQ(tx)));
    },
    withSignal: () => db,
    onShard: (target) => countingDb(inner.onShard(target), counter),
  };
  return db;
}

const toArgs = (args: readonly SqlArg[] | undefined): unknown[] => (args ? args.map((a) => (Array.isArray(a) ? [...a] : a)) : []);

/** A mysql2 server error (it carries `errno` and `sqlState`) as the HTTP driver's DatabaseError. */
function typed(err: unknown): unknown {
  if (!(err instanceof Error) || !('errno' in err) || typeof err.errno !== 'number') return err;
  const sqlState = 'sqlState' in err ? String(err.sqlState) : 'HY000';
  const message = `${err.message} (errno ${err.errno}) (sqlstate ${sqlState})`;
  return new DatabaseError(message, 400, { message, code: 'UNKNOWN' });
}

async function run(conn: Pool | PoolConnection, sql: string, args?: readonly SqlArg[]): Promise<ExecResult> {
  // query(), not execute(): client-side placeholders expand arrays for `IN (?)` as the HTTP driver does.
  const [res] = await conn.query(sql, toArgs(args)).catch((err: unknown) => {
    throw typed(err);
  });
  if (Array.isArray(res)) return { rows: res as Row[], rowsAffected: 0 };
  return { rows: [], rowsAffected: (res as ResultSetHeader).affectedRows };
}

export interface MysqlDb extends Db {
  close(): Promise<void>;
}

/** Baseline B: the Db interface over a mysql2 pool (`connections` sessions) to `database`. */
export function mysqlDb(target: MysqlTarget, database: string, connections: number): MysqlDb {
  const pool = createPool({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database,
    connectionLimit: connections,
    // Read values back as the HTTP driver does: DATETIME as 'YYYY-MM-DD hh:mm:ss.sss', UTC; BIGINT as text.
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  const db: MysqlDb = {
    execute: (sql, args) => run(pool, sql, args),
    async transaction(fn) {
      const conn = await pool.getConnection();
      try {
        await conn.query('BEGIN');
        const result = await fn({ execute: (sql, args) => run(conn, sql, args) });
        await conn.query('COMMIT');
        return result;
      } catch (err) {
        await conn.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        conn.release();
      }
    },
    withSignal: () => db,
    // One MariaDB is one shard: a shard target names it (ledger/shards.ts never asks for another).
    onShard: () => db,
    close: () => pool.end(),
  };
  return db;
}
