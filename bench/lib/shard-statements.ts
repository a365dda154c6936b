// A statement counter for the benchmarks (B8L): an HTTP proxy in front of ps-http-sim that counts
// every round trip (statement) and where it ran. A shard-targeted statement tells its shard: its
// session began with `USE \`ledger:-80\`` (ledger/shards.ts), and ps-http-sim hands the session
// back with every answer, so each later request of that session is the shard's. A statement vtgate
// routes names its tenant (@planetscale/database sends the arguments inside the query text): the
// tenant's shard. A statement that is neither (the global keyspace's scheduled_run, SHOW
// VITESS_SHARDS) counts under `untargeted`; so does one of a session no statement of which named a
// shard. On one MariaDB every statement is the database's: no tenants, `untargeted` names it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StatementProxy {
  /** DATABASE_URL pointing at the proxy (same credentials as the target). */
  url: string;
  /** Round trips so far, by where they ran (a copy). */
  counts(): Map<string, number>;
  close(): Promise<void>;
}

const USE_SHARD = /^\s*USE\s+`[^`:]+:([^`]+)`/i;

export async function startStatementProxy(targetUrl: string, shardOfTenant: ReadonlyMap<string, string>, untargeted: string): Promise<StatementProxy> {
  const target = new URL(targetUrl);
  const counts = new Map<string, number>();
  /** session (as ps-http-sim answered it) → its shard. */
  const sessionShard = new Map<string, string>();
  /** session → its statements not attributed yet (a BEGIN before the statement naming the tenant). */
  const pending = new Map<string, number>();
  const add = (shard: string, n: number) => counts.set(shard, (counts.get(shard) ?? 0) + n);
  const shardOf = (query: string, session: string): string | undefined => {
    const use = USE_SHARD.exec(query);
    if (use) return use[1];
    const known = session ? sessionShard.get(session) : undefined;
    if (known !== undefined) return known;
    for (const [tenant, shard] of shardOfTenant) if (query.includes(`'${tenant}'`)) return shard;
    return undefined;
  };
  const account = (query: string, session: string, answered: string) => {
    const shard = shardOf(query, session);
    const earlier = session ? (pending.get(session) ?? 0) : 0;
    if (session) {
      pending.delete(session);
      sessionShard.delete(session);
    }
    if (shard === undefined && answered) {
      pending.set(answered, earlier + 1);
      return;
    }
    add(shard ?? untargeted, earlier + 1);
    if (shard !== undefined && answered) sessionShard.set(answered, shard);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let request: { query?: unknown; session?: unknown } = {};
      try {
        request = JSON.parse(body.toString('utf8')) as typeof request;
      } catch {
        /* not a statement */
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      fetch(`${target.protocol}//${target.host}${req.url ?? '/'}`, { method: req.method, headers, body })
        .then(async (upstream) => {
          const text = await upstream.text();
          if (typeof request.query === 'string') account(request.query, sessionKey(request.session), sessionKey(answerSession(text)));
          res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json' });
          res.end(text);
        })
        .catch((err: unknown) => {
          console.warn(`[shard-statements] forward failed: ${err instanceof Error ? err.message : String(err)}`);
          req.socket.destroy();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: url.toString().replace(/\/$/, ''),
    counts() {
      const all = new Map(counts);
      const unattributed = [...pending.values()].reduce((a, b) => a + b, 0);
      if (unattributed > 0) all.set(untargeted, (all.get(untargeted) ?? 0) + unattributed);
      return all;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sessionKey = (session: unknown): string => (session === undefined || session === null ? '' : JSON.stringify(session));

function answerSession(text: string): unknown {
  try {
    return (JSON.parse(text) as { session?: unknown }).session;
  } catch {
    return undefined;
  }
}
