// A database fetch that counts the HTTP requests it sends (each one round trip, a Worker
// subrequest: what the cron's statement budget is about, functions/services/sweep.ts) by their
// first SQL word, and lets a test tamper with one statement's reply.
import type { DbFetch } from '../../ledger/db.ts';

export function countingFetch(onCall?: (sql: string, res: Response) => Response | Promise<Response>): { calls: string[]; fetch: DbFetch } {
  const calls: string[] = [];
  const f: DbFetch = async (url, init) => {
    const sql = (JSON.parse(init?.body ?? '{}') as { query?: string }).query ?? '';
    calls.push(sql.split(/\s+/)[0] ?? '');
    const res = await fetch(url, init);
    return onCall ? onCall(sql, res) : res;
  };
  return { calls, fetch: f };
}
