// The one database seam: a small interface over @planetscale/database (the production driver),
// with its `fetch` injectable. Every execute() is one HTTP round trip; a transaction of N
// statements costs N + 2 (BEGIN, COMMIT). Every round trip has a deadline (`timeoutMs`) and is
// aborted by the Db's signal (`withSignal`: a reconcile's context, a shutdown), so no call waits
// on a hung database for longer than the deadline. Errors that mean "the database could not be
// reached" (including a deadline or an abort) become DatabaseUnavailable (→ 503); SQL errors stay
// DatabaseError.
import { Client, DatabaseError, UnknownError, type Config } from '@planetscale/database';

export type Row = Record<string, unknown>;
export type SqlArg = string | number | bigint | boolean | Date | null | ReadonlyArray<string | number>;

export interface ExecResult {
  rows: Row[];
  rowsAffected: number;
}

export interface Queryable {
  execute(sql: string, args?: readonly SqlArg[]): Promise<ExecResult>;
}

export interface Db extends Queryable {
  /** BEGIN, fn, COMMIT on one session; ROLLBACK (best effort) and rethrow when fn or COMMIT throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** The same database; its calls are also aborted when `signal` aborts. */
  withSignal(signal: AbortSignal): Db;
  /**
   * The same database with every session targeted at one shard (`USE \`ledger:-80\``, Vitess's
   * shard targeting): statements run on that shard as written, unrouted. ledger/shards.ts.
   */
  onShard(target: string): Db;
}

export type DbFetch = NonNullable<Config['fetch']>;

export class DatabaseUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailable';
  }
}

// MySQL client/server errnos that mean "no usable connection" rather than "bad SQL" (1203: Vitess's
// vttablet has no transaction slot left, "transaction pool connection limit exceeded": retry later).
const UNAVAILABLE_ERRNOS = /errno (1040|1053|1077|1203|2002|2003|2005|2006|2013)\b/;

function classify(err: unknown): unknown {
  if (err instanceof UnknownError) return new DatabaseUnavailable(err.message, { cause: err });
  if (err instanceof DatabaseError) {
    return UNAVAILABLE_ERRNOS.test(err.message) || err.status >= 500 ? new DatabaseUnavailable(err.message, { cause: err }) : err;
  }
  // fetch() itself failed (connection refused, DNS, reset, abort): the database is unreachable.
  if (err instanceof Error) return new DatabaseUnavailable(`database unreachable: ${err.message}`, { cause: err });
  return err;
}

interface DriverConn {
  execute(query: string, args?: unknown): Promise<{ rows: unknown[]; rowsAffected: number }>;
}

function queryable(conn: DriverConn): Queryable {
  return {
    async execute(sql, args) {
      try {
        const r = await conn.execute(sql, args ? [...args] : null);
        return { rows: r.rows as Row[], rowsAffected: r.rowsAffected };
      } catch (err) {
        throw classify(err);
      }
    },
  };
}

export interface DbOptions {
  url: string;
  fetch?: DbFetch;
  /**
   * Deadline of one round trip (one statement, BEGIN or COMMIT). Default 30 s: longer than a lock
   * wait normally lasts, because an aborted statement is NOT cancelled on the server — it keeps
   * running and holding its locks inside a transaction we can no longer roll back.
   */
  timeoutMs?: number;
  /** Aborts every call in flight and every later one. */
  signal?: AbortSignal;
  /** A Vitess shard (`ledger:-80`): each session starts with `USE` it (one more round trip). */
  target?: string;
}

const DEFAULT_DB_TIMEOUT_MS = 30_000;

/** `fetch` with the per-call deadline and the Db's signal attached to every request. */
function deadlineFetch(base: DbFetch, timeoutMs: number, signal: AbortSignal | undefined): DbFetch {
  return (input, init) => {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    return base(input, { ...init, signal: AbortSignal.any(signals) } as Parameters<DbFetch>[1]);
  };
}

export function createDb(opts: DbOptions): Db {
  const base: DbFetch = opts.fetch ?? ((input, init) => fetch(input, init as RequestInit));
  // A Client opens a fresh Connection (session) per call: concurrent requests never share one.
  const client = new Client({ url: opts.url, fetch: deadlineFetch(base, opts.timeoutMs ?? DEFAULT_DB_TIMEOUT_MS, opts.signal) });
  const { target } = opts;
  if (target !== undefined && !/^[a-z0-9_]+:[0-9a-f]*-[0-9a-f]*$/.test(target)) throw new Error(`not a shard target: ${target}`);
  /** A fresh session (ps-http-sim keeps one MySQL connection per session), targeted if asked. */
  const session = async (): Promise<Queryable> => {
    const q = queryable(client.connection());
    if (target !== undefined) await q.execute(`USE \`${target}\``);
    return q;
  };
  return {
    withSignal: (signal) => createDb({ ...opts, signal: opts.signal ? AbortSignal.any([opts.signal, signal]) : signal }),
    onShard: (shard) => createDb({ ...opts, target: shard }),
    execute: async (sql, args) => (await session()).execute(sql, args),
    async transaction(fn) {
      const tx = await session();
      await tx.execute('BEGIN');
      let result;
      try {
        result = await fn(tx);
        await tx.execute('COMMIT');
      } catch (err) {
        // The original error matters more than a failed ROLLBACK (the server rolls back a
        // transaction whose session is abandoned anyway).
        await tx.execute('ROLLBACK').catch(() => undefined);
        throw err;
      }
      return result;
    },
  };
}

export const isDuplicateKey = (err: unknown): boolean => err instanceof DatabaseError && /errno 1062\b/.test(err.message);
/** Deadlock (1213) or lock wait timeout (1205): the transaction was rolled back; retry it. */
export const isLockConflict = (err: unknown): boolean => err instanceof DatabaseError && /errno (1213|1205)\b/.test(err.message);

/**
 * Runs `attempt` again (at most `times` in all) while it fails with a lock conflict (a deadlock
 * or a lock wait timeout: InnoDB rolled the transaction back, and retrying is the documented
 * answer). Only for a transaction whose statements are guarded, so a run after one that did
 * commit changes nothing twice.
 */
export async function retryLockConflicts<T>(attempt: () => Promise<T>, times = 3): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= times || !isLockConflict(err)) throw err;
    }
  }
}
