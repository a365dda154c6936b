import { describe, expect, it } from 'vitest';
import type { Db, ExecResult, Queryable } from '../../ledger/db.ts';
import { commitOrRollback } from './commit-or-rollback.ts';

/** A Db whose transaction behaves like ledger/db.ts's: BEGIN, the body, COMMIT — or ROLLBACK and the error. */
function fakeDb(): { db: Db; sent: string[] } {
  const sent: string[] = [];
  const execute = async (sql: string): Promise<ExecResult> => {
    sent.push(sql);
    return { rows: [], rowsAffected: 1 };
  };
  const db: Db = {
    execute,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      await execute('BEGIN');
      try {
        const result = await fn({ execute });
        await execute('COMMIT');
        return result;
      } catch (err) {
        await execute('ROLLBACK');
        throw err;
      }
    },
    withSignal: () => db,
    onShard: () => db,
  };
  return { db, sent };
}

describe('commitOrRollback', () => {
  it('commits and answers what the body returns', async () => {
    const { db, sent } = fakeDb();
    const result = await commitOrRollback<string, boolean>(db, async (tx) => {
      await tx.execute('UPDATE a');
      return 'done';
    });
    expect(result).toBe('done');
    expect(sent).toEqual(['BEGIN', 'UPDATE a', 'COMMIT']);
  });

  it('rolls back and answers the outcome given to rollback; nothing after it runs', async () => {
    const { db, sent } = fakeDb();
    const result = await commitOrRollback(db, async (tx, rollback) => {
      const r = await tx.execute('UPDATE a');
      if (r.rowsAffected === 1) return rollback('nothing-to-do' as const);
      await tx.execute('UPDATE b');
      return 'done' as const;
    });
    expect(result).toBe('nothing-to-do');
    expect(sent).toEqual(['BEGIN', 'UPDATE a', 'ROLLBACK']);
  });

  it('rolls back and throws any other error', async () => {
    const { db, sent } = fakeDb();
    const boom = new Error('boom');
    await expect(
      commitOrRollback(db, async (tx) => {
        await tx.execute('UPDATE a');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(sent).toEqual(['BEGIN', 'UPDATE a', 'ROLLBACK']);
  });

  it("an inner transaction's rollback that escapes is an error of the outer one, not its outcome", async () => {
    const { db } = fakeDb();
    let escaped: unknown;
    const outer = commitOrRollback(db, async () => {
      // A rollback captured from another call and invoked here belongs to that call.
      await commitOrRollback(db, async (_tx, rollback) => {
        escaped = rollback;
        return 'inner';
      });
      (escaped as (o: string) => never)('inner outcome');
    });
    await expect(outer).rejects.toThrow('rolled back');
  });
});
