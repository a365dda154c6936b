import { describe, expect, it } from 'vitest';
import { DatabaseError } from '@planetscale/database';
import { createDb, DatabaseUnavailable, retryLockConflicts, type DbFetch } from './db.ts';

/** A database that never answers (a hung server): resolves only when the request is aborted. */
const hung: DbFetch = (_input, init) =>
  new Promise((_resolve, reject) => {
    const signal = (init as { signal?: AbortSignal } | undefined)?.signal;
    if (signal?.aborted) reject(signal.reason as Error); // as fetch does
    signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });

describe('createDb: deadlines and cancellation', () => {
  it('a hung database answers DatabaseUnavailable after the per-call deadline', async () => {
    const db = createDb({ url: 'http://u:p@127.0.0.1:1', fetch: hung, timeoutMs: 50 });
    // Without the deadline this call would hang past the test's own timeout.
    await expect(db.execute('SELECT 1')).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it('withSignal: an abort ends the call in flight, long before the deadline', async () => {
    const ac = new AbortController();
    const db = createDb({ url: 'http://u:p@127.0.0.1:1', fetch: hung, timeoutMs: 60_000 }).withSignal(ac.signal);
    const pending = db.execute('SELECT 1');
    ac.abort(new Error('shutdown'));
    await expect(pending).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it('a transaction under an aborted request signal sends no ROLLBACK that could wait a second deadline', async () => {
    const sent: Array<{ query: string; aborted: boolean }> = [];
    const recording: DbFetch = (input, init) => {
      const signal = (init as { signal?: AbortSignal } | undefined)?.signal;
      const query = (JSON.parse(String(init?.body ?? '{}')) as { query?: string }).query ?? '';
      sent.push({ query, aborted: signal?.aborted ?? false });
      // BEGIN answers; the database hangs from the next statement on.
      return query === 'BEGIN' ? Promise.resolve(Response.json({ session: { signature: 's' }, result: {} })) : hung(input, init);
    };
    // The Worker's shape: a per-call deadline AND one deadline for the request's database work.
    const db = createDb({ url: 'http://u:p@127.0.0.1:1', fetch: recording, timeoutMs: 60_000 }).withSignal(AbortSignal.timeout(50));
    await expect(db.transaction(async (tx) => tx.execute('SELECT 1'))).rejects.toBeInstanceOf(DatabaseUnavailable);
    expect(sent.map((s) => s.query)).toEqual(['BEGIN', 'SELECT 1', 'ROLLBACK']);
    expect(sent[2]?.aborted).toBe(true); // the ROLLBACK went out already aborted: it cannot hang
  });
});

describe('retryLockConflicts', () => {
  const conflict = (errno: number) => new DatabaseError(`Deadlock found when trying to get lock (errno ${errno}) (sqlstate 40001)`, 400, { message: 'x', code: 'ABORTED' });
  const failing = (errors: unknown[]) => {
    let calls = 0;
    return {
      calls: () => calls,
      run: async () => {
        const err = errors[calls++];
        if (err) throw err;
        return 'done';
      },
    };
  };
  it('runs a transaction again after a deadlock or a lock wait timeout', async () => {
    const t = failing([conflict(1213), conflict(1205)]);
    expect(await retryLockConflicts(t.run)).toBe('done');
    expect(t.calls()).toBe(3);
  });
  it('gives up after `times` attempts with the last conflict', async () => {
    const t = failing([conflict(1213), conflict(1213), conflict(1213)]);
    await expect(retryLockConflicts(t.run)).rejects.toThrow(/errno 1213/);
    expect(t.calls()).toBe(3);
  });
  it('any other error ends it at once', async () => {
    const t = failing([new DatabaseError('Duplicate entry (errno 1062)', 400, { message: 'x', code: 'ALREADY_EXISTS' })]);
    await expect(retryLockConflicts(t.run)).rejects.toThrow(/1062/);
    expect(t.calls()).toBe(1);
  });
});
