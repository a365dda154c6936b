import { DatabaseError } from '@planetscale/database';
import { describe, expect, it } from 'vitest';
import type { Db, ExecResult } from './db.ts';
import { shardCache, ledgerShards } from './shards.ts';

/** A Db answering SHOW VITESS_SHARDS with `answer`; onShard records the target. */
function fakeDb(answer: () => Promise<ExecResult>, targets: string[] = []): Db {
  const db: Db = {
    execute: (sql) => (sql === 'SHOW VITESS_SHARDS' ? answer() : Promise.reject(new Error(`unexpected ${sql}`))),
    transaction: () => Promise.reject(new Error('no transactions here')),
    withSignal: () => db,
    onShard: (t) => {
      targets.push(t);
      return db;
    },
  };
  return db;
}
const shardRows = (...names: string[]) => async () => ({ rowsAffected: 0, rows: names.map((n) => ({ Shards: n })) });

describe('ledgerShards', () => {
  it('a sharded ledger keyspace: one targeted Db per shard, in key order; other keyspaces ignored', async () => {
    const targets: string[] = [];
    const shards = await ledgerShards(fakeDb(shardRows('ledger/80-', 'global/0', 'ledger/-80'), targets));
    expect(shards.map((s) => [s.name, s.roundTrips])).toEqual([
      ['ledger/-80', 2],
      ['ledger/80-', 2],
    ]);
    expect(targets).toEqual(['ledger:-80', 'ledger:80-']);
  });

  it('MySQL/MariaDB (SHOW VITESS_SHARDS is a syntax error): the database is the one shard', async () => {
    const message = 'You have an error in your SQL syntax; check the manual (errno 1064) (sqlstate 42000)';
    const db = fakeDb(() => Promise.reject(new DatabaseError(message, 400, { message, code: 'INVALID_ARGUMENT' })));
    const shards = await ledgerShards(db);
    expect(shards).toHaveLength(1);
    expect(shards[0]).toMatchObject({ name: '', roundTrips: 1 });
    expect(shards[0]?.db).toBe(db);
  });

  it('an unsharded keyspace: untargeted', async () => {
    const targets: string[] = [];
    expect((await ledgerShards(fakeDb(shardRows('ledger/0'), targets))).map((s) => s.name)).toEqual(['ledger/0']);
    expect(targets).toEqual([]);
  });

  it('any other error is the caller’s (the database is down: no guessing)', async () => {
    await expect(ledgerShards(fakeDb(() => Promise.reject(new Error('connection refused'))))).rejects.toThrow('connection refused');
  });

  it('shardCache re-reads the list only after its time to live, or at once after forget', async () => {
    let reads = 0;
    let now = 0;
    const db = fakeDb(async () => (reads++, shardRows('ledger/-80', 'ledger/80-')()));
    const shards = shardCache(1000, () => now);
    await shards(db);
    now = 999;
    await shards(db);
    expect(reads).toBe(1);
    now = 1000;
    await shards(db);
    expect(reads).toBe(2);
    shards.forget();
    expect((await shards(db)).map((s) => s.name)).toEqual(['ledger/-80', 'ledger/80-']);
    expect(reads).toBe(3);
  });
});
