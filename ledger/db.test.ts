import { describe, expect, it } from 'vitest';
import { createDb, DatabaseUnavailable, type DbFetch } from './db.ts';

/** A database that never answers (a hung server): resolves only when the request is aborted. */
const hung: DbFetch = (_input, init) =>
  new Promise((_resolve, reject) => {
    const signal = (init as { signal?: AbortSignal } | undefined)?.signal;
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
});
