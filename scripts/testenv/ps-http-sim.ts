// ps-http-sim: the PlanetScale HTTP API (/psdb.v1alpha1.Database/Execute) in front of one
// MariaDB database, so the production driver @planetscale/database is what runs locally.
import { freePort } from './net.ts';
import { startProcess, type ManagedProcess } from './proc.ts';
import type { MysqlTarget } from './mariadb.ts';

export interface SimInstance {
  process: ManagedProcess;
  /** DATABASE_URL for `connect({ url })`. */
  url: string;
  port: number;
}

export async function startPsHttpSim(opts: {
  binary: string;
  mysql: MysqlTarget;
  database: string;
  logDir: string;
  runDir: string;
  name?: string;
  /** The address it listens on (default loopback; the real node's pods reach the host's end of its veth). */
  host?: string;
}): Promise<SimInstance> {
  const port = await freePort();
  const host = opts.host ?? '127.0.0.1';
  const url = `http://${encodeURIComponent(opts.mysql.user)}:${encodeURIComponent(opts.mysql.password)}@${host}:${port}`;
  const process = await startProcess(
    {
      name: opts.name ?? 'ps-http-sim',
      command: opts.binary,
      args: [
        `-listen-addr=${host}`,
        `-listen-port=${port}`,
        `-mysql-addr=${opts.mysql.host}`,
        `-mysql-port=${opts.mysql.port}`,
        `-mysql-dbname=${opts.database}`,
        // ps-http-sim keeps one MySQL connection per session and closes it after this idle time.
        // Two opposite pulls: (1) a transaction whose next statement comes later than that is
        // silently rolled back and the rest of it runs on a NEW connection in autocommit mode
        // (PlanetScale would refuse those statements) — with 2 s, 100 concurrent admissions on a
        // loaded 2-core machine committed reservations without their charge; (2) the session of a
        // killed process keeps its locks until this timeout (PlanetScale's transaction killer
        // plays that part), so crash tests converge slower the longer it is. 10 s is the
        // simulator's own default and serves both.
        '-mysql-idle-timeout=10s',
        '-mysql-max-rows=100000',
        '-log-level=warn',
      ],
      logDir: opts.logDir,
      ready: () => probe(host, port, opts.mysql),
      timeoutMs: 20_000,
    },
    opts.runDir,
  );
  return { process, url, port };
}

async function probe(host: string, port: number, mysql: MysqlTarget): Promise<boolean> {
  const res = await fetch(`http://${host}:${port}/psdb.v1alpha1.Database/Execute`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Authorization: `Basic ${btoa(`${mysql.user}:${mysql.password}`)}`,
    },
    body: JSON.stringify({ query: 'SELECT 1', session: null }),
    signal: AbortSignal.timeout(2000),
  });
  if (!res.ok) return false;
  const body = (await res.json()) as { error?: unknown };
  return !body.error;
}
