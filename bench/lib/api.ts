// B1/B2's set-up: one migrated ledger database behind its own ps-http-sim, a tenant with room for
// every admission, the real Worker in workerd (wrangler dev) on it, and the two baselines on the
// same database — A: the Worker's own service functions from Node through @planetscale/database
// to the same ps-http-sim; B: the same service functions through mysql2 straight to MariaDB.
// The Worker runs with wrangler.toml's vars except DB_TIMEOUT_MS (30 s, as in the tests: a
// loaded 2-core machine must not turn a benchmark into 503s).
import { randomBytes } from 'node:crypto';
import { parseConfig } from '../../functions/config.ts';
import { ulidGenerator, type ServiceDeps } from '../../functions/services/deps.ts';
import { createDb } from '../../ledger/db.ts';
import { admissionRequestSchema, toAdmission, type ParsedAdmission } from '../../schema/admission.ts';
import type { LedgerDatabase } from '../../test/support/admission.ts';
import type { WorkerInstance } from '../../test/support/worker.ts';
import type { BenchContext } from './context.ts';
import { countingDb, mysqlDb, type MysqlDb } from './db.ts';

export const TENANT = 'bench';
const KEY = `bench-key-${randomBytes(12).toString('hex')}`;
export const BODY = { name: 'm', image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } };

export interface Api {
  ledger: LedgerDatabase;
  worker: WorkerInstance;
  /** The body above, parsed by the Worker's own policy (for the baselines' admit()). */
  parsed: ParsedAdmission;
  /** HTTP to the Worker; throws unless the status is `expect`. Returns the JSON body. */
  call(method: string, path: string, expect: number, opts?: { body?: unknown; key?: string }): Promise<Record<string, unknown>>;
  /** Baseline A deps (counting round trips). */
  a: ServiceDeps & { db: ReturnType<typeof countingDb> };
  /** Baseline B deps (mysql2). */
  b: ServiceDeps & { db: MysqlDb };
  newKey(): string;
}

export async function startApi(ctx: BenchContext, connections: number): Promise<Api> {
  const ledger = await ctx.ledger();
  await ledger.setQuota(TENANT, 'cpu=100000', 'memory=100000Gi', 'nvidia.com/gpu=0', 'modelservices=100000');
  const worker = await ctx.worker(ledger.url, { [TENANT]: KEY });
  const config = parseConfig({ DATABASE_URL: ledger.url });
  const decision = toAdmission(admissionRequestSchema(config.maxReplicas).parse(BODY), config.policy);
  if (!decision.ok) throw new Error(`bench body refused: ${JSON.stringify(decision.issues)}`);
  const newId = ulidGenerator();
  const b = mysqlDb(ctx.stack.mysql, ledger.name, connections);
  ctx.defer(() => b.close());
  let n = 0;
  return {
    ledger,
    worker,
    parsed: decision.admission,
    async call(method, path, expect, opts = {}) {
      const res = await fetch(`${worker.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(opts.key ? { 'idempotency-key': opts.key } : {}),
        },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      const text = await res.text();
      if (res.status !== expect) throw new Error(`${method} ${path} answered ${res.status} (expected ${expect}): ${text.slice(0, 300)}`);
      return JSON.parse(text) as Record<string, unknown>;
    },
    a: { db: countingDb(createDb({ url: ledger.url })), clock: () => new Date(), newId },
    b: { db: b, clock: () => new Date(), newId },
    newKey: () => `k-${++n}-${randomBytes(4).toString('hex')}`,
  };
}
