import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStatementProxy, type StatementProxy } from './shard-statements.ts';

/** A stand-in for ps-http-sim: a new session for a request without one, a new token for every answer. */
let upstream: Server;
let proxy: StatementProxy;
beforeAll(async () => {
  let n = 0;
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ session: { token: ++n }, result: {} }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://u:p@127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await startStatementProxy(url, new Map([['t1', '80-'], ['t2', '-80']]), 'vtgate');
});
afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => upstream.close(resolve));
});

/** One session of statements, as @planetscale/database sends them (the answer's session goes with the next). */
async function session(...queries: string[]): Promise<void> {
  let current: unknown = null;
  for (const query of queries) {
    const res = await fetch(`${proxy.url.replace('u:p@', '')}/psdb.v1alpha1.Database/Execute`, { method: 'POST', body: JSON.stringify({ query, session: current }) });
    current = ((await res.json()) as { session: unknown }).session;
  }
}

describe('startStatementProxy', () => {
  it('counts each statement where it ran: a targeted session, a routed tenant, or neither', async () => {
    await session('USE `ledger:-80`', 'SELECT 1 FROM reservation');
    await session("INSERT INTO outbox (tenant) VALUES ('t1')");
    await session('BEGIN', "UPDATE tenant_quota SET used = 0 WHERE tenant = 't2'", 'COMMIT');
    await session("SELECT statements FROM scheduled_run WHERE cron = '*/5 * * * *'");
    await session('BEGIN', 'ROLLBACK');
    expect(Object.fromEntries(proxy.counts())).toEqual({ '-80': 5, '80-': 1, vtgate: 3 });
  });
});
