import { DatabaseError } from '@planetscale/database';
import { describe, expect, it } from 'vitest';
import type { Db, ExecResult, Queryable } from '../../ledger/db.ts';
import { createLogger } from '../runtime/log.ts';
import { leaderFence } from './leader-fence.ts';

/** A one-shard Db (SHOW VITESS_SHARDS is a syntax error) that records what it is sent. */
function recordingDb(o: { failEnsure?: () => boolean } = {}): { db: Db; sent: string[] } {
  const sent: string[] = [];
  const execute = async (sql: string): Promise<ExecResult> => {
    sent.push(sql.replace(/\s+/g, ' ').trim());
    if (sql === 'SHOW VITESS_SHARDS') throw new DatabaseError('syntax (errno 1064)', 400, { message: 'syntax', code: 'INVALID_ARGUMENT' });
    if (/VALUES \(\?, \?, \?, \?, \?\)/.test(sql) && o.failEnsure?.()) throw new Error('database down');
    return { rows: [{ epoch: '7' }], rowsAffected: 1 };
  };
  const db: Db = {
    execute,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => fn({ execute }),
    withSignal: () => db,
    onShard: () => db,
  };
  return { db, sent };
}

const fenceOf = (db: Db) => leaderFence({ db, cluster: 'default', holder: 'ctl', now: () => new Date(0), log: createLogger({ level: 'error' }) });
const raises = (sent: string[]) => sent.filter((s) => s.startsWith('INSERT INTO tenant_fence') && s.includes('SELECT DISTINCT')).length;
const ensures = (sent: string[]) => sent.filter((s) => s.startsWith('INSERT INTO tenant_fence') && s.includes('VALUES (?, ?, ?, ?, ?)')).length;

describe('leaderFence', () => {
  it('takes over once (bump, then the raise of every shard) and raises each tenant met later once', async () => {
    const { db, sent } = recordingDb();
    const fence = fenceOf(db);
    expect(await fence.forTenants(['a', 'b'])).toBe(7);
    expect(await fence.forTenants(['a'])).toBe(7);
    expect(await fence.epoch()).toBe(7);
    expect(sent.filter((s) => s.startsWith('INSERT INTO controller_epoch'))).toHaveLength(1);
    expect(sent.filter((s) => s === 'SHOW VITESS_SHARDS')).toHaveLength(1);
    expect(raises(sent)).toBe(1); // the one shard, at the takeover
    expect(ensures(sent)).toBe(2); // a and b, once each
  });

  it('a tenant whose raise failed is raised again on the next call', async () => {
    let fail = true;
    const { db, sent } = recordingDb({ failEnsure: () => fail });
    const fence = fenceOf(db);
    await expect(fence.forTenants(['a'])).rejects.toThrow('database down');
    fail = false;
    expect(await fence.forTenants(['a'])).toBe(7);
    expect(await fence.forTenants(['a'])).toBe(7);
    expect(ensures(sent)).toBe(2); // the failed one and the successful one
  });
});
