// The sharded ledger backend of the local stack: a private MariaDB instance (own datadir,
// port and socket under the run dir), vtcombo (vtgate + every tablet in one process) with the
// keyspace `ledger` in 2 shards on the `tenant` vindex and the unsharded keyspace `global`,
// and ps-http-sim in front of vtgate so @planetscale/database talks to real vtgate routing.
// vtgate runs with --transaction-mode SINGLE: a transaction that writes to a second shard fails.
// Why each flag, and what was verified on this backend: docs/local-stack.md, docs/vitess-statements.md.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.ts';
import { startProcess, StackError, type ManagedProcess } from './proc.ts';
import { startPsHttpSim } from './ps-http-sim.ts';
import type { MysqlTarget } from './mariadb.ts';
import { createDb } from '../../ledger/db.ts';
import { migrate, splitStatements } from '../../ledger/migrate.ts';

const run = promisify(execFile);

/** VSchema files, one per keyspace (`<keyspace>.json`), committed next to the migrations. */
export const VSCHEMA_DIR = fileURLToPath(new URL('../../ledger/vschema/', import.meta.url));

export interface KeyspaceSpec {
  name: string;
  shards: string[];
}

/** The ledger sharded by tenant in 2 shards, and what must be global (unsharded). */
export const KEYSPACES: readonly KeyspaceSpec[] = [
  { name: 'ledger', shards: ['-80', '80-'] },
  { name: 'global', shards: ['0'] },
];

/** The OS user the Vitess processes run as: vtcombo refuses to run as root. */
const RUN_AS = { user: 'nobody', group: 'nogroup' };

export interface VitessInfo {
  /** DATABASE_URL (ps-http-sim → vtgate), no default keyspace (`@primary`): vtgate finds each table in the keyspace its VSchema names. */
  databaseUrl: string;
  /** vtgate's MySQL protocol port (no authentication; loopback only). */
  vtgatePort: number;
  /** vtcombo's HTTP port (/debug/status, /debug/vschema). */
  httpPort: number;
  /** The private MariaDB behind the tablets: its unix socket (root, no password). */
  mysqlSocket: string;
  keyspaces: KeyspaceSpec[];
}

export interface VitessInstance {
  info: VitessInfo;
  processes: ManagedProcess[];
}

export interface VitessOptions {
  binDir: string;
  runDir: string;
  logDir: string;
  log?: (msg: string) => void;
}

/** Starts MariaDB, vtcombo and ps-http-sim; on failure stops what it started and throws a StackError. */
export async function startVitess(opts: VitessOptions): Promise<VitessInstance> {
  const log = opts.log ?? (() => undefined);
  const root = join(opts.runDir, 'vitess');
  const dirs = { root, data: join(root, 'mysql'), home: join(root, 'home'), schema: join(root, 'schema'), tmp: join(root, 'tmp') };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const ids = await osIds(RUN_AS.user);
  for (const d of Object.values(dirs)) chownSync(d, ids.uid, ids.gid);
  writeSchemaDir(dirs.schema);

  const processes: ManagedProcess[] = [];
  const stopAll = () => Promise.all(processes.splice(0).reverse().map((p) => p.stop()));
  try {
    const t0 = Date.now();
    const socket = join(root, 'mysql.sock');
    const mysqlPort = await freePort();
    await initDatadir(dirs.data);
    processes.push(
      await startProcess(
        {
          name: 'vitess-mariadb',
          command: 'setpriv',
          args: [
            ...asUser(),
            'mariadbd',
            '--no-defaults',
            `--datadir=${dirs.data}`,
            `--socket=${socket}`,
            `--port=${mysqlPort}`,
            '--bind-address=127.0.0.1',
            `--pid-file=${join(root, 'mysql.pid')}`,
            `--tmpdir=${dirs.tmp}`,
            '--log-bin=binlog',
            '--server-id=1',
            '--binlog-format=ROW',
            '--character-set-server=utf8mb4',
            '--collation-server=utf8mb4_unicode_ci',
            '--max-connections=1000',
            '--innodb-buffer-pool-size=64M',
            '--skip-name-resolve',
          ],
          logDir: opts.logDir,
          ready: () => socketSql(socket, 'SELECT 1').then(() => true),
          timeoutMs: 60_000,
        },
        opts.runDir,
      ),
    );
    // With an external mysqld, vtcombo does not create the shard databases itself.
    await socketSql(
      socket,
      KEYSPACES.flatMap((ks) => ks.shards.map((s) => `CREATE DATABASE IF NOT EXISTS \`vt_${ks.name}_${s}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)).join(';\n'),
    );
    log(`[vitess] mariadb up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const t1 = Date.now();
    const [vtgatePort, httpPort, grpcPort] = [await freePort(), await freePort(), await freePort()];
    const dbUsers = ['app', 'dba', 'allprivs', 'repl', 'filtered', 'appdebug'].flatMap((u) => [`--db-${u}-user`, 'root']);
    processes.push(
      await startProcess(
        {
          name: 'vtcombo',
          command: 'setpriv',
          args: [
            ...asUser(),
            join(opts.binDir, 'vtcombo'),
            '--start-mysql=false',
            `--db-socket=${socket}`,
            ...dbUsers,
            '--db-charset=utf8mb4',
            `--json-topo=${JSON.stringify({ cells: ['test'], keyspaces: KEYSPACES.map((ks) => ({ name: ks.name, shards: ks.shards.map((name) => ({ name })) })) })}`,
            `--schema-dir=${dirs.schema}`,
            '--cell=test',
            `--port=${httpPort}`,
            `--grpc-port=${grpcPort}`,
            `--mysql-server-port=${vtgatePort}`,
            '--mysql-server-bind-address=127.0.0.1',
            '--mysql-auth-server-impl=none',
            '--mysql-server-version=8.0.40-Vitess',
            '--planner-version=Gen4',
            '--enable-direct-ddl=true',
            '--enable-online-ddl=false',
            '--transaction-mode=SINGLE',
            // A vttablet admits 20 concurrent transactions by default and refuses the 21st with
            // errno 1203 once it waited (PlanetScale sizes this per plan). The suites drive 100
            // concurrent admissions of one tenant (one shard), as they do on one MariaDB: room for them.
            '--queryserver-config-transaction-cap=150',
            `--log_dir=${dirs.tmp}`,
          ],
          env: { HOME: dirs.home, VTDATAROOT: dirs.root, TMPDIR: dirs.tmp },
          logDir: opts.logDir,
          ready: () => tabletsServing(vtgatePort, KEYSPACES.reduce((n, ks) => n + ks.shards.length, 0)),
          timeoutMs: 90_000,
        },
        opts.runDir,
      ),
    );
    log(`[vitess] vtcombo serving in ${((Date.now() - t1) / 1000).toFixed(1)} s`);

    const gate: MysqlTarget = { host: '127.0.0.1', port: vtgatePort, user: 'modeldock', password: 'modeldock' };
    const sim = await startPsHttpSim({ binary: join(opts.binDir, 'ps-http-sim'), mysql: gate, database: '@primary', logDir: opts.logDir, runDir: opts.runDir, name: 'ps-http-sim-vitess' });
    processes.push(sim.process);
    return {
      info: { databaseUrl: sim.url, vtgatePort, httpPort, mysqlSocket: socket, keyspaces: KEYSPACES.map((ks) => ({ ...ks, shards: [...ks.shards] })) },
      processes,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * startVitess, then the ledger migrations applied THROUGH vtgate (ledger/migrate.ts, unchanged)
 * on a session without a default keyspace: vtgate sends each CREATE/ALTER to the keyspace its
 * table has in the VSchema (every shard of `ledger`, or `global`), so one run of the migrations
 * lays out both keyspaces. Then the Vitess-only `<keyspace>.sql` files (the outbox sequence).
 */
export async function startVitessLedger(opts: VitessOptions): Promise<VitessInstance> {
  const v = await startVitess(opts);
  try {
    const t0 = Date.now();
    const db = createDb({ url: v.info.databaseUrl });
    const r = await migrate(db);
    // Vitess-only objects of each keyspace (`<keyspace>.sql` next to its VSchema: sequences).
    for (const ks of KEYSPACES) {
      const file = join(VSCHEMA_DIR, `${ks.name}.sql`);
      if (!existsSync(file)) continue;
      for (const statement of splitStatements(readFileSync(file, 'utf8'))) await db.execute(statement);
    }
    opts.log?.(`[vitess] migrated (${r.applied.length} applied) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return v;
  } catch (err) {
    await Promise.all(v.processes.reverse().map((p) => p.stop()));
    throw new StackError('vitess-migrate', err instanceof Error ? err.message : String(err));
  }
}

/**
 * An empty MariaDB datadir (root@localhost, no password) owned by the run-as user. The first run
 * per MariaDB version runs mariadb-install-db (5-15 s here) and keeps a copy in the cache
 * (~/.cache/modeldock/vitess-mariadb/<version hash>); later runs copy that (well under a second).
 */
async function initDatadir(dir: string): Promise<void> {
  const version = (await run('mariadbd', ['--version'])).stdout.trim();
  const cache = join(process.env.MODELDOCK_CACHE ?? join(homedir(), '.cache/modeldock'), 'vitess-mariadb');
  const template = join(cache, createHash('sha256').update(version).digest('hex').slice(0, 12));
  if (!existsSync(join(template, READY))) {
    await run('setpriv', [...asUser(), 'mariadb-install-db', '--no-defaults', `--datadir=${dir}`, '--auth-root-authentication-method=normal', '--skip-test-db'], {
      maxBuffer: 1 << 24,
    }).catch((err: unknown) => {
      throw new StackError('vitess-mariadb', `mariadb-install-db failed: ${(err as Error).message}`);
    });
    // Publish atomically: a concurrent run either sees no template or a complete one.
    const tmp = `${template}.tmp-${process.pid}`;
    mkdirSync(cache, { recursive: true });
    rmSync(tmp, { recursive: true, force: true });
    await run('cp', ['-a', dir, tmp]);
    writeFileSync(join(tmp, READY), version);
    try {
      renameSync(tmp, template);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another run published it first
    }
    return;
  }
  rmSync(dir, { recursive: true, force: true });
  await run('cp', ['-a', template, dir]); // keeps the run-as user's ownership
  rmSync(join(dir, READY), { force: true });
}

const READY = '.modeldock-template';

function asUser(): string[] {
  return [`--reuid=${RUN_AS.user}`, `--regid=${RUN_AS.group}`, '--clear-groups'];
}

async function osIds(user: string): Promise<{ uid: number; gid: number }> {
  const [u, g] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** vtcombo's --schema-dir: one folder per keyspace holding its vschema.json. */
function writeSchemaDir(dir: string): void {
  const have = new Set(existsSync(VSCHEMA_DIR) ? readdirSync(VSCHEMA_DIR) : []);
  for (const ks of KEYSPACES) {
    if (!have.has(`${ks.name}.json`)) throw new StackError('vtcombo', `no VSchema for keyspace ${ks.name} in ${VSCHEMA_DIR}`);
    mkdirSync(join(dir, ks.name), { recursive: true });
    copyFileSync(join(VSCHEMA_DIR, `${ks.name}.json`), join(dir, ks.name, 'vschema.json'));
  }
}

/** SQL as root over the private MariaDB's unix socket (mariadb CLI). */
export async function socketSql(socket: string, sql: string): Promise<string> {
  const { stdout } = await run('mariadb', ['--no-defaults', `--socket=${socket}`, '-uroot', '--batch', '--skip-column-names', '-e', sql], {
    timeout: 20_000,
  });
  return stdout;
}

/** SQL straight to vtgate's MySQL port (mariadb CLI; vtgate runs without authentication). */
export async function vtgateSql(port: number, sql: string, keyspace = 'ledger'): Promise<string> {
  const { stdout } = await run(
    'mariadb',
    ['--no-defaults', '-h127.0.0.1', `-P${port}`, '-umodeldock', '--batch', '--skip-column-names', '--skip-ssl', keyspace, '-e', sql],
    { timeout: 20_000 },
  );
  return stdout;
}

/** True once vtgate sees `expected` PRIMARY tablets SERVING. */
async function tabletsServing(port: number, expected: number): Promise<boolean> {
  const out = await vtgateSql(port, 'SHOW VITESS_TABLETS');
  const serving = out.split('\n').filter((line) => /\bPRIMARY\b/.test(line) && /\bSERVING\b/.test(line));
  return serving.length >= expected;
}
