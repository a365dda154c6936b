// Runs the real Worker (functions/worker.ts) in workerd through `wrangler dev`, on a free
// loopback port, against one test database. Secrets go into a generated env file; the
// process is registered with the stack's run dir, so it is killed with everything else.
//
// Nothing is sent twice. A call without an answer inside its deadline fails, naming the call.
// wrangler dev's own proxy (its ProxyWorker, in front of workerd) resends a GET or HEAD whose
// connection to workerd dropped, and re-queues requests in flight when it restarts the Worker
// (a source file changed); it logs both. Every such line in the log is counted and printed, and
// fails the next call (or stop()) unless the Worker was started with allowTransportRetries —
// for a test about retries, which then asserts on transportRetries() itself.
import { mkdirSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { errorMessage } from '../../controller/runtime/errors.ts';
import { RATE_LIMITS } from '../../functions/rate-limit.ts';
import { withLimits } from '../../functions/rate-limit-config.ts';
import { freePort } from '../../scripts/testenv/net.ts';
import { startProcess, tailFile, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { repoRoot, type StackInfo } from '../../scripts/testenv/stack.ts';
import { logLines } from './log-lines.ts';

export interface WorkerInstance {
  url: string;
  process: ManagedProcess;
  /**
   * fetch(url + path), sent once, with a deadline 10 s above the Worker's own DB_TIMEOUT_MS, so
   * a call can fail but never hang a test. Throws when wrangler's proxy retried a request.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * Triggers scheduled() as the cron trigger would, once: a POST, which wrangler's proxy never
   * resends (a lost connection answers 503). Resolves to the HTTP status (200 = ok).
   */
  scheduled(cron: string, scheduledTime: number): Promise<number>;
  /** The log lines of wrangler's proxy retrying or re-queuing a request, since start. */
  transportRetries(): string[];
  /** Stops wrangler dev; throws if a transport retry was logged that no call has reported yet. */
  stop(): Promise<void>;
}

export interface WorkerOptions {
  databaseUrl: string;
  /** ADMISSION_KEYS_JSON: tenant → a key or "sha256:<64 hex>" digest, or a list of them. */
  keys: Record<string, string | string[]>;
  /** Extra vars (override wrangler.toml [vars], and MODELDOCK_ENV=development, which lets tests use plaintext keys). */
  vars?: Record<string, string>;
  name?: string;
  /** The stack to run in (default: the test run's, through vitest's inject; bench/ passes its own). */
  stack?: Pick<StackInfo, 'runDir' | 'logDir'>;
  /** Only for a test about retries: a retry of wrangler's proxy is counted, printed, and not an error. */
  allowTransportRetries?: boolean;
  /**
   * The rate limits per period (wrangler.toml's periods): by default far above what any test sends
   * (TEST_RATE_LIMIT), so only a test about rate limits meets them; `shipped` runs wrangler.toml as it is.
   */
  rateLimits?: 'shipped' | { ip?: number; tenant?: number };
}

/** The rate limit of a Worker whose test is not about rate limits: never reached. */
export const TEST_RATE_LIMIT = 1_000_000;

/** wrangler.toml with other limits, in the Worker's own directory (`main` made absolute). */
function configWith(dir: string, limits: { ip?: number; tenant?: number }): string {
  const shipped = readFileSync(join(repoRoot, 'wrangler.toml'), 'utf8').replace(/^main = "([^"]+)"$/m, (_m, main: string) => `main = ${JSON.stringify(join(repoRoot, main))}`);
  const file = join(dir, 'wrangler.toml');
  writeFileSync(file, withLimits(shipped, { [RATE_LIMITS.ip.binding]: limits.ip ?? TEST_RATE_LIMIT, [RATE_LIMITS.tenant.binding]: limits.tenant ?? TEST_RATE_LIMIT }));
  return file;
}

/** What wrangler 4.164's ProxyWorker logs when it sends a request to workerd again. */
export const TRANSPORT_RETRY = /recovered on attempt \d+ after a dropped connection|\(failed after \d+ attempts\)|Detected changes, restarted server/;

const quote = (v: string) => `'${v.replace(/'/g, '')}'`;

export async function startWorker(opts: WorkerOptions): Promise<WorkerInstance> {
  const stack = opts.stack ?? inject('stack');
  const port = await freePort();
  const name = opts.name ?? `wrangler-${port}`;
  const dir = join(stack.runDir, name);
  mkdirSync(dir, { recursive: true });
  const envFile = join(dir, 'worker.env');
  // DB_TIMEOUT_MS: 30 s unless a test sets it. On 2 shared cores a burst of 100 requests through
  // workerd's 6 connections outlasts the 5 s production default, and a statement aborted at the
  // deadline keeps its locks in ps-http-sim until its session idles out, so every later request of
  // the suite would wait on them too. The outage suites set the default explicitly.
  // MODELDOCK_ENV: wrangler.toml says production, where plaintext keys are refused; a test that
  // is about production mode sets it back.
  // ALLOWED_IMAGE_REGISTRIES: `*` (any registry, said explicitly; wrangler.toml allows only
  // docker.io/modeldock): the suites admit many images; a test about the image policy sets its list.
  const vars = { DATABASE_URL: opts.databaseUrl, ADMISSION_KEYS_JSON: JSON.stringify(opts.keys), MODELDOCK_ENV: 'development', DB_TIMEOUT_MS: '30000', ALLOWED_IMAGE_REGISTRIES: '*', ...opts.vars };
  writeFileSync(envFile, Object.entries(vars).map(([k, v]) => `${k}=${quote(v)}`).join('\n') + '\n');
  const config = opts.rateLimits === 'shipped' ? [] : [`--config=${configWith(dir, opts.rateLimits ?? {})}`];
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(stack.logDir, `${name}.log`); // startProcess appends to it
  const log = logLines(logFile, existsSync(logFile) ? statSync(logFile).size : 0);
  const process = await startProcess(
    {
      name,
      command: join(repoRoot, 'node_modules/.bin/wrangler'),
      // No --test-scheduled: it only adds wrangler's /__scheduled middleware to the bundle;
      // /cdn-cgi/local/scheduled is always served in dev.
      args: [
        'dev',
        ...config,
        '--ip=127.0.0.1',
        `--port=${port}`,
        '--inspector-port=0',
        `--env-file=${envFile}`,
        `--persist-to=${join(dir, 'state')}`,
        '--show-interactive-dev-session=false',
        '--log-level=info',
      ],
      cwd: repoRoot,
      env: { WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: '1', WRANGLER_LOG_PATH: join(dir, 'wrangler-logs') },
      logDir: stack.logDir,
      ready: async () => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).status > 0,
      timeoutMs: 90_000,
    },
    stack.runDir,
  );
  const retries: string[] = [];
  let reported = 0;
  /** Reads the log's new lines; a new transport retry is printed, and thrown unless allowed. */
  const checkRetries = (during: string) => {
    for (const line of log.next()) {
      if (!TRANSPORT_RETRY.test(line)) continue;
      retries.push(line.trim());
      console.warn(`[${name}] transport retry by wrangler's proxy (${retries.length} so far): ${line.trim()}`);
    }
    if (opts.allowTransportRetries || retries.length === reported) return;
    const fresh = retries.slice(reported);
    reported = retries.length;
    throw new Error(`${during}: wrangler dev's proxy sent a request to the Worker again (no test here is about retries):\n${fresh.join('\n')}`);
  };
  const deadlineMs = Number(vars.DB_TIMEOUT_MS) + 10_000;
  const call: WorkerInstance['fetch'] = async (path, init = {}) => {
    const what = `${init.method ?? 'GET'} ${path}`;
    const timeout = AbortSignal.timeout(deadlineMs);
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, { ...init, signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
    } catch (err) {
      checkRetries(what);
      const why = timeout.aborted ? `no answer within ${deadlineMs} ms (not sent again)` : errorMessage(err);
      throw new Error(`${what} to the Worker: ${why}; the tail of ${process.logFile}:\n${tailFile(process.logFile, 20)}`, { cause: err });
    }
    checkRetries(what);
    return res;
  };
  return {
    url,
    process,
    fetch: call,
    async scheduled(cron, scheduledTime) {
      const q = new URLSearchParams({ cron, time: String(scheduledTime) });
      const res = await call(`/cdn-cgi/local/scheduled?${q}`, { method: 'POST' });
      await res.arrayBuffer();
      return res.status;
    },
    transportRetries: () => [...retries],
    async stop() {
      await process.stop();
      checkRetries(`${name} (at stop)`);
    },
  };
}
