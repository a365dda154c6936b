// Runs the real Worker (functions/worker.ts) in workerd through `wrangler dev`, on a free
// loopback port, against one test database. Secrets go into a generated env file; the
// process is registered with the stack's run dir, so it is killed with everything else.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { freePort } from '../../scripts/testenv/net.ts';
import { startProcess, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { repoRoot, type StackInfo } from '../../scripts/testenv/stack.ts';

export interface WorkerInstance {
  url: string;
  process: ManagedProcess;
  /**
   * fetch(url + path) with a deadline 10 s above the Worker's own DB_TIMEOUT_MS, so a call can
   * fail but never hang a test; a GET whose answer never came is sent once more (wrangler dev's
   * proxy has been seen to drop a request under the suite's load — no answer, nothing in the
   * Worker's log; workers-sdk#3942 — and newer wrangler versions retry safe requests themselves).
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Triggers scheduled() as the cron trigger would; resolves to the HTTP status (200 = ok). */
  scheduled(cron: string, scheduledTime: number): Promise<number>;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  databaseUrl: string;
  keys: Record<string, string>;
  /** Extra vars (override wrangler.toml [vars]). */
  vars?: Record<string, string>;
  name?: string;
  /** The stack to run in (default: the test run's, through vitest's inject; bench/ passes its own). */
  stack?: Pick<StackInfo, 'runDir' | 'logDir'>;
}

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
  const vars = { DATABASE_URL: opts.databaseUrl, ADMISSION_KEYS_JSON: JSON.stringify(opts.keys), DB_TIMEOUT_MS: '30000', ...opts.vars };
  writeFileSync(envFile, Object.entries(vars).map(([k, v]) => `${k}=${quote(v)}`).join('\n') + '\n');
  const url = `http://127.0.0.1:${port}`;
  const process = await startProcess(
    {
      name,
      command: join(repoRoot, 'node_modules/.bin/wrangler'),
      args: [
        'dev',
        '--ip=127.0.0.1',
        `--port=${port}`,
        '--inspector-port=0',
        `--env-file=${envFile}`,
        `--persist-to=${join(dir, 'state')}`,
        '--test-scheduled',
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
  const deadlineMs = Number(vars.DB_TIMEOUT_MS) + 10_000;
  const call: WorkerInstance['fetch'] = (path, init = {}) => {
    const send = () => fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(deadlineMs) });
    return send().catch((err: unknown) => {
      if ((init.method ?? 'GET') !== 'GET' || !(err instanceof DOMException && err.name === 'TimeoutError')) throw err;
      return send();
    });
  };
  return {
    url,
    process,
    fetch: call,
    async scheduled(cron, scheduledTime) {
      const q = new URLSearchParams({ cron, time: String(scheduledTime) });
      const res = await call(`/cdn-cgi/handler/scheduled?${q}`);
      await res.arrayBuffer();
      return res.status;
    },
    stop: () => process.stop(),
  };
}
