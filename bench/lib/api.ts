// B1/B2's set-up: one migrated ledger database behind its own ps-http-sim, a tenant with room for
// every admission, the real Worker in workerd (wrangler dev) on it, and the two baselines on the
// same database — A: the Worker's own service functions from Node through @planetscale/database
// to the same ps-http-sim; B: the same service functions through mysql2 straight to MariaDB.
// The Worker runs with wrangler.toml's vars except DB_TIMEOUT_MS (30 s, as in the tests: a
// loaded 2-core machine must not turn a benchmark into 503s) and ALLOWED_IMAGE_REGISTRIES (the
// body's registry).
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseConfig } from '../../functions/config.ts';
import { ulidGenerator, type ServiceDeps } from '../../functions/services/deps.ts';
import { createDb } from '../../ledger/db.ts';
import { admissionRequestSchema, toAdmission, type ParsedAdmission } from '../../schema/admission.ts';
import type { LedgerDatabase } from '../../test/support/ledger-database.ts';
import type { WorkerInstance } from '../../test/support/worker.ts';
import type { BenchContext } from './context.ts';
import { countingDb, mysqlDb, type MysqlDb } from './db.ts';
import { startDirectWorker } from './workerd-worker.ts';
import { createPlacer } from '../../ledger/placement.ts';

export const TENANT = 'bench';
const KEY = `bench-key-${randomBytes(12).toString('hex')}`;
export const BODY = { name: 'm', image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } };
/** The image policy of every Worker here and of the baselines: the body's registry, as an operator would list it. */
const POLICY_VARS = { ALLOWED_IMAGE_REGISTRIES: 'ghcr.io/acme' };

export type Call = (method: string, path: string, expect: number, opts?: { body?: unknown; key?: string }) => Promise<Record<string, unknown>>;

export interface Api {
  ledger: LedgerDatabase;
  /** The Worker through `wrangler dev` (its Node proxy in front of workerd). */
  worker: WorkerInstance;
  /** The same Worker bundle in workerd alone (no dev proxy, no Miniflare); pid of that workerd. */
  direct: { url: string; pid: number };
  /** The body above, parsed by the Worker's own policy (for the baselines' admit()). */
  parsed: ParsedAdmission;
  /** HTTP to the Worker through wrangler dev; throws unless the status is `expect`. Returns the JSON body. */
  call: Call;
  /** The same, to the Worker without the dev proxy. */
  callDirect: Call;
  /** Baseline A deps (counting round trips). */
  a: ServiceDeps & { db: ReturnType<typeof countingDb> };
  /** Baseline B deps (mysql2). */
  b: ServiceDeps & { db: MysqlDb };
  newKey(): string;
}

/** `direct: false` skips the workerd-only Worker (benchmarks that only need the API through wrangler dev). */
export async function startApi(ctx: BenchContext, connections: number, opts: { direct?: boolean } = {}): Promise<Api> {
  const ledger = await ctx.ledger();
  await ledger.setQuota(TENANT, 'cpu=100000', 'memory=100000Gi', 'nvidia.com/gpu=0', 'modelservices=100000');
  const keys = { [TENANT]: KEY };
  const worker = await ctx.worker(ledger.url, keys, POLICY_VARS);
  const direct = opts.direct === false ? undefined : await startDirectWorker({
    dir: join(ctx.stack.runDir, `direct-${randomBytes(3).toString('hex')}`),
    logFile: join(ctx.stack.logDir, 'worker-direct.log'),
    // As at the edge: wrangler.toml's MODELDOCK_ENV=production, so the key is given as its digest.
    vars: { DATABASE_URL: ledger.url, ADMISSION_KEYS_JSON: JSON.stringify({ [TENANT]: `sha256:${createHash('sha256').update(KEY).digest('hex')}` }), DB_TIMEOUT_MS: '30000', ...POLICY_VARS },
  });
  if (direct) ctx.defer(() => direct.stop());
  const config = parseConfig({ DATABASE_URL: ledger.url, ...POLICY_VARS });
  const decision = toAdmission(admissionRequestSchema(config.maxReplicas).parse(BODY), config.policy);
  if (!decision.ok) throw new Error(`bench body refused: ${JSON.stringify(decision.issues)}`);
  const newId = ulidGenerator();
  const b = mysqlDb(ctx.stack.mysql, ledger.name, connections);
  ctx.defer(() => b.close());
  let n = 0;
  return {
    ledger,
    worker,
    direct: { url: direct?.url ?? '', pid: direct?.pid ?? -1 },
    parsed: decision.admission,
    call: caller(worker.url, KEY),
    callDirect: direct ? caller(direct.url, KEY) : () => Promise.reject(new Error('started without the direct Worker')),
    a: { db: countingDb(createDb({ url: ledger.url })), clock: () => new Date(), newId, placer: createPlacer() },
    b: { db: b, clock: () => new Date(), newId, placer: createPlacer() },
    newKey: () => `k-${++n}-${randomBytes(4).toString('hex')}`,
  };
}

/** One admission through the Worker (`call`: through wrangler dev unless told otherwise). */
export const viaWorker = (api: Api, call: Call = api.call) => async () => {
  await call('POST', '/requests', 201, { body: BODY, key: api.newKey() });
};

/** Retried 503s (`wrangler dev` answers "Your worker restarted mid-request" now and then under load). */
export const retried = { count: 0 };

function caller(base: string, key: string): Call {
  const once = async (method: string, path: string, opts: { body?: unknown; key?: string }) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(opts.key ? { 'idempotency-key': opts.key } : {}),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    return { status: res.status, text: await res.text() };
  };
  return async (method, path, expect, opts = {}) => {
    let r = await once(method, path, opts);
    // A client retries a 503 with the same Idempotency-Key (the API's contract): a replay is 200.
    for (let attempt = 1; r.status === 503 && opts.key && attempt <= 3; attempt++) {
      retried.count++;
      r = await once(method, path, opts);
      if (r.status === 200 && expect === 201) r.status = 201;
    }
    if (r.status !== expect) throw new Error(`${method} ${path} answered ${r.status} (expected ${expect}): ${r.text.slice(0, 300)}`);
    return JSON.parse(r.text) as Record<string, unknown>;
  };
}
