// The ledger's shards: what a statement that cannot name a tenant (the outbox poller, the resync,
// the cron sweep and purge, the takeover's fence raise, the checker) runs on, one shard at a time,
// so that no statement of ModelDock reaches two shards.
//
// On Vitess the ledger keyspace's shards come from `SHOW VITESS_SHARDS` (e.g. `ledger/-80`,
// `ledger/80-`), and each is reached through shard targeting (`USE \`ledger:-80\``: the statement
// runs on that shard as written; Db.onShard). On one MySQL (MariaDB here, an unsharded PlanetScale
// database) `SHOW VITESS_SHARDS` is a syntax error, or lists one shard: the database itself is the
// one shard. A keyspace being resharded changes the list: callers re-read it (LEDGER_SHARDS_TTL).
import { DatabaseError } from '@planetscale/database';
import { str } from './columns.ts';
import type { Db } from './db.ts';

export const LEDGER_KEYSPACE = 'ledger';

export interface LedgerShard {
  /** `ledger/-80`, or '' for an unsharded database. */
  name: string;
  db: Db;
  /** Round trips of one statement on `db`: 2 when targeted (the session's USE comes first). */
  roundTrips: 1 | 2;
}

/** The shards of `keyspace`, each with a Db targeted at it; one untargeted shard when not sharded. */
export async function ledgerShards(db: Db, keyspace = LEDGER_KEYSPACE): Promise<LedgerShard[]> {
  let names: string[];
  try {
    const r = await db.execute('SHOW VITESS_SHARDS');
    names = r.rows.map((row) => str(Object.values(row)[0])).filter((n) => n.startsWith(`${keyspace}/`));
  } catch (err) {
    // MySQL/MariaDB: "You have an error in your SQL syntax" (1064) — not Vitess, one database.
    if (err instanceof DatabaseError && /errno 1064\b|syntax/i.test(err.message)) return [{ name: '', db, roundTrips: 1 }];
    throw err;
  }
  if (names.length <= 1) return [{ name: names[0] ?? '', db, roundTrips: 1 }];
  return names.sort().map((name) => ({ name, db: shardDb(db, name), roundTrips: 2 }));
}

/** `db` targeted at the shard named `name` (`ledger/-80`); '' is the one shard of an unsharded database: `db` itself. */
export const shardDb = (db: Db, name: string): Db => (name === '' ? db : db.onShard(name.replace('/', ':')));

/** A cached shard list, read through the handle each call passes; `forget` drops it (a transaction found it stale). */
export type ShardReader = ((db: Db) => Promise<LedgerShard[]>) & { forget(): void };

/**
 * Shards re-read at most every `ttlMs` (a reshard adds shards; a failed read is retried next time),
 * through the handle each call passes (a Worker's handle carries its request's deadline), and at
 * once after `forget` (a transaction refused as cross-shard: anchors/isCrossShard).
 */
export function shardCache(ttlMs: number, now: () => number = Date.now): ShardReader {
  let cached: { at: number; shards: LedgerShard[] } | undefined;
  const read = async (db: Db) => {
    if (cached && now() - cached.at < ttlMs) return cached.shards;
    const shards = await ledgerShards(db);
    cached = { at: now(), shards };
    return shards;
  };
  return Object.assign(read, { forget: () => (cached = undefined) });
}
