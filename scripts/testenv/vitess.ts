// The sharded ledger backend of the local stack: a private MariaDB instance (own datadir,
// port and socket under the run dir), vtcombo (vtgate + every tablet in one process) with the
// keyspace `ledger` in 2 shards on the `tenant` vindex and the unsharded keyspace `global`,
// and ps-http-sim in front of vtgate so @planetscale/database talks to real vtgate routing.
// vtgate runs with --transaction-mode SINGLE: a transaction that writes to a second shard fails.
// Why each flag, and what was verified on this backend: docs/local-stack.md, docs/vitess-statements.md.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort, freeServerPort } from './net.ts';
import { makePrivateDir, startProcess, StackError, traversableBy, type ManagedProcess, type Owner } from './proc.ts';
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

/** The OS user the Vitess processes run as when started by root: vtcombo refuses to run as root. */
const UNPRIVILEGED = 'nobody';

/** Who the Vitess processes run as, and the command prefix that makes them so (none: as the invoking user). */
interface RunAs extends Owner {
  prefix: string[];
}

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

/**
 * Starts MariaDB, vtcombo and ps-http-sim; on failure stops what it started and throws a StackError.
 * Their files (datadir, socket, vtcombo's home and tmp) live in a private directory outside the
 * run dir (makePrivateDir: <run dir>/private/vitess links to it), reachable by the user they run
 * as wherever the checkout is; the stack removes it at stop.
 */
export async function startVitess(opts: VitessOptions): Promise<VitessInstance> {
  const log = opts.log ?? (() => undefined);
  const user = await runAs();
  const root = makePrivateDir(opts.runDir, 'vitess', user);
  const dirs = { data: join(root, 'mysql'), home: join(root, 'home'), schema: join(root, 'schema'), tmp: join(root, 'tmp') };
  for (const d of Object.values(dirs)) {
    mkdirSync(d, { recursive: true });
    if (process.getuid?.() === 0) chownSync(d, user.uid, user.gid);
  }
  writeSchemaDir(dirs.schema);
  const vtcombo = reachableBinary(join(opts.binDir, 'vtcombo'), root, user);
  const socket = join(root, 'mysql.sock');
  // sun_path holds 108 bytes with the NUL: a longer path fails only later, inside mariadbd.
  if (Buffer.byteLength(socket) > 107) throw new StackError('vitess-mariadb', `unix socket path longer than 107 bytes: ${socket} (set TMPDIR to a shorter directory)`);

  const processes: ManagedProcess[] = [];
  const stopAll = () => Promise.all(processes.splice(0).reverse().map((p) => p.stop()));
  try {
    const t0 = Date.now();
    const mysqlPort = await freePort();
    await initDatadir(dirs.data, user, root);
    processes.push(
      await startProcess(
        {
          name: 'vitess-mariadb',
          ...asUser(user, 'mariadbd', [
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
          ]),
          cwd: root, // the invoking shell's directory (the checkout) may be out of this user's reach
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
    // vtcombo binds its HTTP and gRPC ports on every address: ports no outgoing connection can take.
    const [vtgatePort, httpPort] = [await freePort(), await freeServerPort()];
    const grpcPort = await freeServerPort([httpPort]);
    const dbUsers = ['app', 'dba', 'allprivs', 'repl', 'filtered', 'appdebug'].flatMap((u) => [`--db-${u}-user`, 'root']);
    processes.push(
      await startProcess(
        {
          name: 'vtcombo',
          ...asUser(user, vtcombo, [
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
          ]),
          cwd: root,
          env: { HOME: dirs.home, VTDATAROOT: root, TMPDIR: dirs.tmp },
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
 * per MariaDB version and user runs mariadb-install-db (5-15 s here) and keeps a copy in the cache
 * (${MODELDOCK_CACHE:-~/.cache/modeldock}/vitess-mariadb/<hash>); later runs copy that (well
 * under a second). The cache is an optimisation only: a HOME that cannot hold it costs the 5-15 s.
 */
async function initDatadir(dir: string, user: RunAs, cwd: string): Promise<void> {
  const version = (await run('mariadbd', ['--version'])).stdout.trim();
  const cache = join(process.env.MODELDOCK_CACHE ?? join(homedir(), '.cache/modeldock'), 'vitess-mariadb');
  // Keyed by the owner too: a template made for nobody is unreadable for a non-root user, and vice versa.
  const template = join(cache, createHash('sha256').update(`${version}\0${user.uid}:${user.gid}`).digest('hex').slice(0, 12));
  if (existsSync(join(template, READY))) {
    rmSync(dir, { recursive: true, force: true });
    await run('cp', ['-a', template, dir]); // keeps the run-as user's ownership
    rmSync(join(dir, READY), { force: true });
    return;
  }
  const install = asUser(user, 'mariadb-install-db', ['--no-defaults', `--datadir=${dir}`, '--auth-root-authentication-method=normal', '--skip-test-db']);
  await run(install.command, install.args, { cwd, maxBuffer: 1 << 24 }).catch((err: unknown) => {
    throw new StackError('vitess-mariadb', `mariadb-install-db failed: ${(err as Error).message}`);
  });
  await publishTemplate(dir, template, version).catch(() => undefined);
}

/** Publishes an initialised datadir as the template, atomically: a concurrent run sees none or a complete one. */
async function publishTemplate(dir: string, template: string, version: string): Promise<void> {
  const tmp = `${template}.tmp-${process.pid}`;
  mkdirSync(join(template, '..'), { recursive: true });
  rmSync(tmp, { recursive: true, force: true });
  try {
    await run('cp', ['-a', dir, tmp]);
    writeFileSync(join(tmp, READY), version);
    renameSync(tmp, template);
  } finally {
    rmSync(tmp, { recursive: true, force: true }); // left only if another run published first
  }
}

const READY = '.modeldock-template';

/** As root: the unprivileged user, through setpriv (no supplementary groups). Otherwise: the invoking user. */
async function runAs(): Promise<RunAs> {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? uid, prefix: [] };
  const [u, g] = await Promise.all([run('id', ['-u', UNPRIVILEGED]), run('id', ['-g', UNPRIVILEGED])]);
  const ids = { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
  return { ...ids, prefix: ['setpriv', `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups'] };
}

function asUser(user: RunAs, command: string, args: string[]): { command: string; args: string[] } {
  const [first, ...rest] = user.prefix;
  return first === undefined ? { command, args } : { command: first, args: [...rest, command, ...args] };
}

/**
 * `binary` if the run-as user can reach it; else a hard link (a copy across file systems) in
 * `dir`: the binary cache lives in the invoking user's home, which may be 0700 (/root is).
 */
function reachableBinary(binary: string, dir: string, user: Owner): string {
  const real = realpathSync(binary);
  if (traversableBy(join(real, '..'), user)) return real;
  const local = join(dir, 'bin-vtcombo');
  try {
    linkSync(real, local);
  } catch {
    copyFileSync(real, local);
  }
  return local;
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
