// The whole local stack: Go binaries (built once, cached by version), MariaDB with
// ModelDock's database and user, ps-http-sim in front of it, and the Kubernetes control
// plane with a KWOK node. Used by the vitest global setup and by `npm run stack`.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startControlPlane } from './kube.ts';
import { ensureMariaDB, mysqlFromEnv, provision, type MysqlTarget } from './mariadb.ts';
import { killLeftovers, pidFile, StackError, type ManagedProcess } from './proc.ts';
import { startPsHttpSim } from './ps-http-sim.ts';

export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** What tests and people need to reach the stack. Serializable (vitest `provide`). */
export interface StackInfo {
  runDir: string;
  logDir: string;
  binDir: string;
  kubeconfig: string;
  kubeServer: string;
  /** DATABASE_URL of the stack's own database, for `@planetscale/database` `connect({ url })`. */
  databaseUrl: string;
  database: string;
  mysql: MysqlTarget;
}

export interface Stack {
  info: StackInfo;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Directory for pids, kubeconfig, pki, etcd data and logs (wiped at start). */
  runDir: string;
  database?: string;
  log?: (msg: string) => void;
}

/** Builds (or finds cached) binaries; returns the directory holding them all. */
export function buildBinaries(log: (msg: string) => void): Promise<string> {
  return new Promise((resolveDir, reject) => {
    const child = execFile('bash', [join(repoRoot, 'scripts/testenv/build.sh')], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      if (err) {
        reject(new StackError('build', err.message, stderr.split('\n').slice(-30).join('\n')));
        return;
      }
      resolveDir(stdout.trim().split('\n').at(-1) ?? '');
    });
    child.stderr?.on('data', (d: Buffer) => log(d.toString().trimEnd()));
  });
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const log = opts.log ?? ((m: string) => console.error(m));
  const runDir = resolve(opts.runDir);
  const logDir = join(runDir, 'logs');
  killLeftovers(runDir);
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  writeFileSync(pidFile(runDir), '');

  const t0 = Date.now();
  const binDir = await buildBinaries(log);
  const mysql = mysqlFromEnv();
  const database = opts.database ?? 'modeldock';
  const processes: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.splice(0).reverse().map((p) => p.stop()));
  };
  try {
    const [sim, kube] = await Promise.all([
      (async () => {
        await ensureMariaDB(mysql.port);
        await provision(mysql, database);
        const s = await startPsHttpSim({ binary: join(binDir, 'ps-http-sim'), mysql, database, logDir, runDir });
        processes.push(s.process);
        return s;
      })(),
      startControlPlane({ binDir, runDir, logDir }).then((cp) => {
        processes.push(...cp.processes);
        return cp;
      }),
    ]);
    const info: StackInfo = {
      runDir,
      logDir,
      binDir,
      kubeconfig: kube.kubeconfig,
      kubeServer: kube.server,
      databaseUrl: sim.url,
      database,
      mysql: { host: mysql.host, port: mysql.port, user: mysql.user, password: mysql.password },
    };
    writeFileSync(join(runDir, 'stack.json'), JSON.stringify(info, null, 2));
    log(`[stack] up in ${((Date.now() - t0) / 1000).toFixed(1)} s (logs: ${logDir})`);
    return { info, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
