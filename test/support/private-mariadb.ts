// A MariaDB server of one suite's own (its data dir under the stack's run dir, its own port),
// so a suite can stop and restart THE database without touching the shared server on 3306
// that every other suite — and every other worktree — uses. With a ps-http-sim in front of its
// `modeldock` database, it is a DatabaseStack for createLedgerDatabase()/startSystem().
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { canConnect, freePort } from '../../scripts/testenv/net.ts';
import { startProcess, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { startPsHttpSim } from '../../scripts/testenv/ps-http-sim.ts';
import type { DatabaseStack } from './test-database.ts';

const run = promisify(execFile);

export interface PrivateMariaDB {
  stack: DatabaseStack;
  /** Stops the server (SIGTERM: a clean shutdown, SIGKILL after 2 s); resolves when it has exited. */
  stopServer(): Promise<number>;
  /** Starts it again on the same data dir and port; resolves when it accepts connections. */
  startServer(): Promise<number>;
  stop(): Promise<void>;
}

export async function startPrivateMariaDB(name: string): Promise<PrivateMariaDB> {
  const base = inject('stack');
  const dir = join(base.runDir, name);
  const data = join(dir, 'data');
  const socket = join(dir, 'mysqld.sock');
  mkdirSync(data, { recursive: true });
  await run('mariadb-install-db', ['--no-defaults', `--datadir=${data}`, '--user=root', '--auth-root-authentication-method=socket', '--skip-test-db'], {
    maxBuffer: 1 << 24,
  });
  const port = await freePort();
  const spec = {
    name,
    command: 'mariadbd',
    args: [
      '--no-defaults',
      `--datadir=${data}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${socket}`,
      `--pid-file=${join(dir, 'mysqld.pid')}`,
      '--user=root',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      '--max-connections=2000',
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_unicode_ci',
    ],
    logDir: base.logDir,
    ready: () => canConnect(port),
    timeoutMs: 60_000,
  };
  let server: ManagedProcess = await startProcess(spec, base.runDir);
  const mysql = { host: '127.0.0.1', port, user: base.mysql.user, password: base.mysql.password };
  const u = mysql.user.replace(/'/g, "''");
  const p = mysql.password.replace(/'/g, "''");
  const sql = [
    'CREATE DATABASE IF NOT EXISTS modeldock',
    ...['127.0.0.1', 'localhost'].flatMap((host) => [
      `CREATE USER IF NOT EXISTS '${u}'@'${host}' IDENTIFIED BY '${p}'`,
      `GRANT ALL PRIVILEGES ON modeldock.* TO '${u}'@'${host}'`,
      `GRANT ALL PRIVILEGES ON \`mdt\\_%\`.* TO '${u}'@'${host}'`,
    ]),
  ].join(';\n');
  await run('mariadb', ['--no-defaults', `--socket=${socket}`, '-uroot', '--batch', '-e', sql]);
  const sim = await startPsHttpSim({ binary: join(base.binDir, 'ps-http-sim'), mysql, database: 'modeldock', logDir: base.logDir, runDir: base.runDir, name: `${name}-admin-sim` });
  return {
    stack: { databaseUrl: sim.url, binDir: base.binDir, mysql, logDir: base.logDir, runDir: base.runDir },
    async stopServer() {
      await server.stop();
      return Date.now();
    },
    async startServer() {
      server = await startProcess(spec, base.runDir);
      return Date.now();
    },
    async stop() {
      await sim.process.stop();
      await server.stop();
    },
  };
}
