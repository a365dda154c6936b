// An HTTP proxy in front of ps-http-sim that can lose the reply to a COMMIT: the statement
// reaches the database (and commits), but the caller's connection is cut before the answer
// arrives — what a network failure or a killed isolate looks like to the Worker.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LossyProxy {
  /** DATABASE_URL pointing at the proxy (same credentials as the target). */
  url: string;
  /** The next `count` COMMIT replies are lost. */
  loseCommitReplies(count: number): void;
  /** Statements seen, in order (first word). */
  readonly statements: string[];
  /**
   * Forwards that failed (upstream error or deadline): the caller's connection was cut for a
   * reason the test did not ask for. Printed as they happen; a test asserts this stays empty.
   */
  readonly failures: string[];
  close(): Promise<void>;
}

/** Above the Worker's own per-request database deadline in the tests (30 s). */
const UPSTREAM_DEADLINE_MS = 60_000;

export async function startLossyProxy(targetUrl: string): Promise<LossyProxy> {
  const target = new URL(targetUrl);
  const origin = `${target.protocol}//${target.host}`;
  let toLose = 0;
  const statements: string[] = [];
  const failures: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let query = '';
      try {
        query = String((JSON.parse(body.toString('utf8')) as { query?: unknown }).query ?? '');
      } catch {
        /* not a statement */
      }
      statements.push(query.trim().split(/\s+/)[0] ?? '');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      // A deadline, so a stuck upstream cuts the caller's connection (the Worker answers 503)
      // instead of holding it open past the test's own timeout.
      fetch(`${origin}${req.url ?? '/'}`, { method: req.method, headers, body, signal: AbortSignal.timeout(UPSTREAM_DEADLINE_MS) })
        .then(async (upstream) => {
          const text = await upstream.text();
          if (query.trim().toUpperCase() === 'COMMIT' && toLose > 0) {
            toLose--;
            req.socket.destroy(); // committed upstream; the reply never arrives
            return;
          }
          res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json' });
          res.end(text);
        })
        .catch((err: unknown) => {
          const failure = `${query.trim().split(/\s+/)[0] ?? ''} → ${origin}: ${err instanceof Error ? err.message : String(err)}`;
          failures.push(failure);
          console.warn(`[lossy-proxy] forward failed, the caller's connection is cut: ${failure}`);
          req.socket.destroy();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString().replace(/\/$/, ''),
    loseCommitReplies(count) {
      toLose = count;
    },
    statements,
    failures,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
