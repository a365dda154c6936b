// MariaDB for the local stack: make sure a server runs (reuse or install), then provision
// ModelDock's database and user. Admin SQL goes through the mariadb CLI as root.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { canConnect } from './net.ts';
import { StackError } from './proc.ts';

const run = promisify(execFile);

export interface MysqlTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function mysqlFromEnv(env: NodeJS.ProcessEnv = process.env): MysqlTarget & { adminUser: string; adminPassword: string } {
  return {
    host: '127.0.0.1',
    port: Number(env.MODELDOCK_MYSQL_PORT ?? 3306),
    user: env.MODELDOCK_MYSQL_USER ?? 'modeldock',
    password: env.MODELDOCK_MYSQL_PASSWORD ?? 'modeldock',
    adminUser: env.MODELDOCK_MYSQL_ADMIN_USER ?? 'root',
    adminPassword: env.MODELDOCK_MYSQL_ADMIN_PASSWORD ?? '',
  };
}

export async function ensureMariaDB(port: number): Promise<void> {
  if (await canConnect(port)) return;
  const script = fileURLToPath(new URL('./ensure-mariadb.sh', import.meta.url));
  try {
    await run('bash', [script], { env: { ...process.env, MODELDOCK_MYSQL_PORT: String(port) }, maxBuffer: 1 << 24 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new StackError('mariadb', e.message, e.stderr?.split('\n').slice(-30).join('\n') ?? '');
  }
}

/** Runs SQL as the admin user: over TCP first, then over the local socket (fresh Debian installs use unix_socket auth for root). */
export async function adminSql(target: ReturnType<typeof mysqlFromEnv>, sql: string): Promise<string> {
  const client = await mariadbClient();
  const auth = [`-u${target.adminUser}`, ...(target.adminPassword ? [`-p${target.adminPassword}`] : [])];
  const attempts = [['-h', target.host, '-P', String(target.port), ...auth], auth];
  let last: unknown;
  for (const args of attempts) {
    try {
      const { stdout } = await run(client, [...args, '--batch', '--skip-column-names', '-e', sql]);
      return stdout;
    } catch (err) {
      last = err;
    }
  }
  throw new StackError('mariadb', `admin SQL failed: ${(last as Error).message}`);
}

async function mariadbClient(): Promise<string> {
  for (const c of ['mariadb', 'mysql']) {
    try {
      await run(c, ['--version']);
      return c;
    } catch {
      /* try the next name */
    }
  }
  throw new StackError('mariadb', 'neither the mariadb nor the mysql command-line client is installed');
}

const ident = (name: string): string => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe identifier ${name}`);
  return name;
};

/**
 * Creates the application user (password auth over TCP, as the PlanetScale simulator needs),
 * with rights on `database` and on per-test databases `mdt_*`, and raises max_connections:
 * the simulator opens one MySQL connection per session-less statement and keeps it 10 s, so a
 * suite's burst of statements (the resync suite's 2,000 reconciles: ~2,500 at once) is that many
 * connections, and two such suites side by side passed 5,000.
 */
export async function provision(target: ReturnType<typeof mysqlFromEnv>, database: string): Promise<void> {
  const u = target.user.replace(/'/g, "''");
  const p = target.password.replace(/'/g, "''");
  await adminSql(
    target,
    [
      `CREATE DATABASE IF NOT EXISTS \`${ident(database)}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
      ...['127.0.0.1', 'localhost'].flatMap((host) => [
        `CREATE USER IF NOT EXISTS '${u}'@'${host}' IDENTIFIED BY '${p}'`,
        `ALTER USER '${u}'@'${host}' IDENTIFIED BY '${p}'`,
        `GRANT ALL PRIVILEGES ON \`${ident(database)}\`.* TO '${u}'@'${host}'`,
        `GRANT ALL PRIVILEGES ON \`mdt\\_%\`.* TO '${u}'@'${host}'`,
      ]),
      `SET GLOBAL max_connections = GREATEST(@@max_connections, 10000)`,
      `SET GLOBAL character_set_server = 'utf8mb4'`,
      `SET GLOBAL collation_server = 'utf8mb4_unicode_ci'`,
    ].join(';\n'),
  );
}
