import { DatabaseError } from '@planetscale/database';
import { describe, expect, it } from 'vitest';
import { anchorsOf, inRange, isCrossShard, keyspaceId, ledgerAnchors, rangeOf, searchAnchors, shardOfTenant, shardRange, xxh64 } from './anchors.ts';
import type { Db, ExecResult } from './db.ts';
import type { LedgerShard } from './shards.ts';

/**
 * XXH64 (seed 0) and the `tenant` vindex's keyspace ids as Vitess 24's Go code computes them
 * (cespare/xxhash/v2 Sum64; vindexes.vXXHash writes it little-endian): every input length path
 * (0, < 4, 4, 7, 8, 12, 31, 32 = one stripe, 63) and a non-ASCII name.
 */
const VECTORS: [id: string, sum: string, keyspaceId: string][] = [
  ['', 'ef46db3751d8e999', '99e9d85137db46ef'],
  ['~a0', 'b814155ed32ac2b7', 'b7c22ad35e1514b8'],
  ['acme', 'bb189bfb846fec0c', '0cec6f84fb9b18bb'],
  ['abcd', 'de0327b0d25d92cc', 'cc925dd2b02703de'],
  ['abcdefg', '1860940e2902822d', '2d8202290e946018'],
  ['abcdefgh', '3ad351775b4634b7', 'b734465b7751d33a'],
  ['abcdefghijkl', '4b09b7d3a233d4b3', 'b3d433a2d3b7094b'],
  ['tenant-with-a-name-of-31-chars-', '812930fca220b5d5', 'd5b520a2fc302981'],
  ['tenant-with-a-name-of-32-chars-x', '957e5a90bd23c34b', '4bc323bd905a7e95'],
  ['a'.repeat(63), '6ad86a2f6c603cc9', 'c93c606c2f6ad86a'],
  ['tenant-α', '73f883a6132b4198', '98412b13a683f873'],
];

/** Keyspace ids of the first candidates (Vitess's), for the search over shards. */
const CANDIDATES: Record<string, string> = {
  '~a0': 'b7c22ad35e1514b8',
  '~a1': '2d7058dc8df2f238',
  '~a2': 'd1ce00683d86ab95',
  '~a3': '95e99690a6106885',
  '~a4': '79beab1a40ad7c89',
  '~a5': 'a1d1b9a002068793',
  '~a6': '7cc4d4e88d499942',
  '~a7': '582d4c13a05bad49',
};

const TWO = ['ledger/-80', 'ledger/80-'];
const FOUR = ['ledger/-40', 'ledger/40-80', 'ledger/80-c0', 'ledger/c0-'];

describe('keyspaceId (the xxhash vindex)', () => {
  it.each(VECTORS)('%j: XXH64 and its little-endian keyspace id, as Vitess computes them', (id, sum, ksid) => {
    expect(xxh64(new TextEncoder().encode(id)).toString(16).padStart(16, '0')).toBe(sum);
    expect(keyspaceId(id)).toBe(ksid);
  });

  it('the first candidates', () => {
    for (const [id, ksid] of Object.entries(CANDIDATES)) expect(keyspaceId(id), id).toBe(ksid);
  });
});

describe('shardRange and inRange', () => {
  it('reads a shard name as its key range, as Vitess does (hex, trailing zero bytes ignored)', () => {
    expect(shardRange('ledger/-80')).toEqual({ start: '', end: '80' });
    expect(shardRange('ledger/80-')).toEqual({ start: '80', end: '' });
    expect(shardRange('40-8000')).toEqual({ start: '40', end: '80' });
    expect(shardRange('ledger/C0-')).toEqual({ start: 'c0', end: '' });
    for (const bad of ['', 'ledger/0', 'ledger/8-', 'ledger/x0-', 'ledger/-80-c0']) expect(() => shardRange(bad), bad).toThrow();
  });

  it('a range holds its start and stops before its end', () => {
    const low = shardRange('-80');
    const high = shardRange('80-');
    for (const [id, inLow] of [
      ['0000000000000000', true],
      ['', true],
      ['7fffffffffffffff', true],
      ['8000000000000000', false],
      ['80', false],
      ['ffffffffffffffff', false],
      ['0CEC6F84FB9B18BB', true],
    ] as const) {
      expect(inRange(id, low), id).toBe(inLow);
      expect(inRange(id, high), id).toBe(!inLow);
    }
    expect(inRange('4000000000000000', shardRange('40-80'))).toBe(true);
    expect(inRange('3fffffffffffffff', shardRange('40-80'))).toBe(false);
    expect(() => inRange('abc', low)).toThrow('not a keyspace id');
  });

  it('rangeOf finds the shard of an id, and refuses an id that no shard holds', () => {
    const ranges = FOUR.map(shardRange);
    expect(rangeOf(ranges, '0cec6f84fb9b18bb')).toBe(0);
    expect(rangeOf(ranges, 'c0')).toBe(3);
    expect(() => rangeOf([shardRange('-80')], 'ff')).toThrow('in no shard');
  });
});

describe('searchAnchors', () => {
  const table = (id: string) => CANDIDATES[id] ?? '0000000000000000';

  it('each shard gets the first candidate its range holds: 2 shards', () => {
    expect(searchAnchors(TWO)).toEqual(['~a1', '~a0']);
    expect(searchAnchors(TWO, table)).toEqual(['~a1', '~a0']);
  });

  it('4 shards: candidates tried in order until every shard has one', () => {
    const tried: string[] = [];
    const anchors = searchAnchors(FOUR, (id) => (tried.push(id), table(id)));
    expect(anchors).toEqual(['~a1', '~a4', '~a0', '~a2']);
    expect(tried).toEqual(['~a0', '~a1', '~a2', '~a3', '~a4']);
    expect(searchAnchors(FOUR)).toEqual(anchors);
  });

  it('gives up, naming the shard, when no candidate lands in it', () => {
    expect(() => searchAnchors(TWO, () => '00')).toThrow('no anchor among 1024 candidates for shard(s) ledger/80-');
    expect(() => searchAnchors(TWO, table, 1)).toThrow('no anchor among 1 candidates for shard(s) ledger/-80');
  });

  it('the anchors of 16 shards are distinct and each lands in its own shard', () => {
    const names = Array.from({ length: 16 }, (_, i) => `ledger/${i ? (i * 16).toString(16) : ''}-${i < 15 ? ((i + 1) * 16).toString(16) : ''}`);
    const anchors = searchAnchors(names);
    expect(new Set(anchors).size).toBe(16);
    anchors.forEach((a, i) => expect(rangeOf(names.map(shardRange), keyspaceId(a)), a).toBe(i));
  });
});

/** A Db answering SHOW VITESS_SHARDS with `shards` (undefined: MariaDB's syntax error), recording every statement. */
function fakeDb(shards: string[] | undefined, sqls: string[] = []): Db {
  const answer = async (sql: string): Promise<ExecResult> => {
    sqls.push(sql);
    if (sql !== 'SHOW VITESS_SHARDS') throw new Error(`unexpected ${sql}`);
    if (shards) return { rowsAffected: 0, rows: shards.map((n) => ({ Shards: n })) };
    const message = 'You have an error in your SQL syntax; check the manual (errno 1064) (sqlstate 42000)';
    throw new DatabaseError(message, 400, { message, code: 'INVALID_ARGUMENT' });
  };
  const db: Db = { execute: answer, transaction: () => Promise.reject(new Error('no transactions here')), withSignal: () => db, onShard: () => db };
  return db;
}

describe('ledgerAnchors, anchorsOf and shardOfTenant', () => {
  it('MariaDB: one shard, anchor ~a0, every tenant on it; SHOW VITESS_SHARDS is the only statement', async () => {
    const sqls: string[] = [];
    const anchors = await ledgerAnchors(fakeDb(undefined, sqls));
    expect(anchors.map((a) => [a.shard.name, a.anchor])).toEqual([['', '~a0']]);
    expect(shardOfTenant([anchors[0]?.shard as LedgerShard], 'acme').name).toBe('');
    expect(sqls).toEqual(['SHOW VITESS_SHARDS']);
  });

  it('an unsharded ledger keyspace on Vitess: the same', async () => {
    expect((await ledgerAnchors(fakeDb(['ledger/0']))).map((a) => [a.shard.name, a.anchor])).toEqual([['ledger/0', '~a0']]);
  });

  it('2 shards, in key order', async () => {
    const sqls: string[] = [];
    expect((await ledgerAnchors(fakeDb(['ledger/80-', 'global/0', 'ledger/-80'], sqls))).map((a) => [a.shard.name, a.anchor])).toEqual([
      ['ledger/-80', '~a1'],
      ['ledger/80-', '~a0'],
    ]);
    expect(sqls).toEqual(['SHOW VITESS_SHARDS']);
  });

  it('the shard of a tenant, and of an anchor', () => {
    const db = fakeDb(TWO);
    const shards = TWO.map((name) => ({ name, db, roundTrips: 2 as const }));
    expect(shardOfTenant(shards, 'acme').name).toBe('ledger/-80');
    expect(shardOfTenant(shards, 'abcd').name).toBe('ledger/80-');
    for (const { shard, anchor } of anchorsOf(shards)) expect(shardOfTenant(shards, anchor)).toBe(shard);
  });
});

describe('isCrossShard', () => {
  const dbError = (message: string) => new DatabaseError(message, 400, { message, code: 'ABORTED' });
  it('is transaction mode SINGLE’s refusal of a second shard, nothing else', () => {
    expect(isCrossShard(dbError('multi-db transaction attempted: [target:{keyspace:"ledger" shard:"-80"}] (errno 1317) (sqlstate 70100)'))).toBe(true);
    expect(isCrossShard(dbError('Query execution was interrupted (errno 1317) (sqlstate 70100)'))).toBe(false);
    expect(isCrossShard(new Error('multi-db transaction attempted (errno 1317)'))).toBe(false);
  });
});
