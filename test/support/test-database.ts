// Per-test database isolation: each call creates its own MariaDB database `mdt_<random>`
// and a ps-http-sim in front of it (the simulator serves one database per process), so a
// test talks to MySQL exactly as production does — through @planetscale/database over HTTP.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { connect, type Connection } from '@planetscale/database';
import { inject } from 'vitest';
import type { ManagedProcess } from '../../scripts/testenv/proc.ts';
import { startPsHttpSim } from '../../scripts/testenv/ps-http-sim.ts';
import type { StackInfo } from '../../scripts/testenv/stack.ts';

/** What a test database needs of the stack (the `integration` and the `vitess` projects both have it). */
export type DatabaseStack = Pick<StackInfo, 'databaseUrl' | 'binDir' | 'mysql' | 'logDir' | 'runDir'>;

export interface TestDatabase {
  name: string;
  /** DATABASE_URL for this database. */
  url: string;
  conn: Connection;
  /** The ps-http-sim in front of this database only (outage tests freeze it with SIGSTOP); none for the run's shared Vitess ledger. */
  sim?: ManagedProcess;
  drop(): Promise<void>;
}

export async function createTestDatabase(stack: DatabaseStack = inject('stack')): Promise<TestDatabase> {
  const name = `mdt_${randomBytes(6).toString('hex')}`;
  await connect({ url: stack.databaseUrl }).execute(
    `CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
  );
  const sim = await startPsHttpSim({
    binary: join(stack.binDir, 'ps-http-sim'),
    mysql: stack.mysql,
    database: name,
    logDir: stack.logDir,
    runDir: stack.runDir,
    name: `ps-http-sim-${name}`,
  });
  return {
    name,
    url: sim.url,
    conn: connect({ url: sim.url }),
    sim: sim.process,
    async drop() {
      await sim.process.stop();
      await connect({ url: stack.databaseUrl }).execute(`DROP DATABASE IF EXISTS ${name}`);
    },
  };
}
