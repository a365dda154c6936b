// The whole of ModelDock for end-to-end tests: a migrated ledger database, the Worker in
// workerd (wrangler dev) serving the tenant API, and the controller as real child processes
// (`node controller/main.ts`) against the real control plane — each restartable and killable,
// so crash points can be injected and recovery observed.
import { join } from 'node:path';
import { inject } from 'vitest';
import { checkLedger, type Drift } from '../../controller/ledger/check.ts';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { freePort } from '../../scripts/testenv/net.ts';
import { startProcess, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { createLedgerDatabase, type LedgerDatabase } from './admission.ts';
import { createNamespace, kubeClients } from './kube.ts';
import { ensureCrd } from './operator.ts';
import { waitFor } from './wait.ts';
import { startWorker, type WorkerInstance } from './worker.ts';

export const TENANT = 'acme';
export const TENANT_KEY = 'acme-e2e-key-0123456789abcdef';

export interface ControllerProcess {
  name: string;
  proc: ManagedProcess;
  port: number;
  metrics(): Promise<string>;
  alive(): boolean;
}

export interface System {
  ledger: LedgerDatabase;
  namespace: string;
  worker: WorkerInstance;
  kube: KubeClient;
  /** Starts a controller process (leader-elected) with extra env, e.g. MODELDOCK_CRASH_AT. */
  startController(name: string, env?: Record<string, string>, waitReady?: boolean): Promise<ControllerProcess>;
  api(path: string, init?: { method?: string; body?: unknown; idempotencyKey?: string }): Promise<{ status: number; body: ApiBody }>;
  check(settled?: boolean): Promise<Drift[]>;
  stop(): Promise<void>;
}

// The API's JSON, loosely typed for assertions.
export type ApiBody = Record<string, unknown> & { error?: { code: string; message: string } };

/** Controller timings shortened for tests (lease 4 s); everything else is production code. */
export const FAST_CONTROLLER_ENV: Record<string, string> = {
  LEASE_DURATION_MS: '4000',
  LEASE_RENEW_DEADLINE_MS: '3000',
  LEASE_RETRY_PERIOD_MS: '500',
  LOG_LEVEL: 'debug',
};

export async function startSystem(opts: { quota?: string[]; workerVars?: Record<string, string> } = {}): Promise<System> {
  const stack = inject('stack');
  const { kc, core } = kubeClients();
  const kube = new KubeClient({ kc });
  const ledger = await createLedgerDatabase();
  await ledger.setQuota(TENANT, ...(opts.quota ?? ['cpu=16', 'memory=64Gi', 'nvidia.com/gpu=4']));
  const ns = await createNamespace(core, 'e2e');
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
  await ensureCrd(kube, ns.name);
  const worker = await startWorker({ databaseUrl: ledger.url, keys: { [TENANT]: TENANT_KEY }, vars: opts.workerVars });
  const controllers: ControllerProcess[] = [];

  return {
    ledger,
    namespace: ns.name,
    worker,
    kube,
    async startController(name, env = {}, waitReady = true) {
      const port = await freePort();
      const proc = await startProcess(
        {
          name,
          command: process.execPath, // Node 24, as vitest runs on it
          args: [join(repoRoot, 'controller/main.ts')],
          cwd: repoRoot,
          logDir: stack.logDir,
          env: {
            KUBECONFIG: stack.kubeconfig,
            NAMESPACE: ns.name,
            DATABASE_URL: ledger.url,
            METRICS_PORT: String(port),
            POD_NAME: name,
            ...FAST_CONTROLLER_ENV,
            ...env,
          },
          ready: async () => (await fetch(`http://127.0.0.1:${port}/${waitReady ? 'readyz' : 'healthz'}`)).ok,
          timeoutMs: 30_000,
        },
        stack.runDir,
      );
      let exited = false;
      void waitForExit(proc.pid).then(() => (exited = true));
      const c: ControllerProcess = {
        name,
        proc,
        port,
        metrics: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
        alive: () => !exited && isAlive(proc.pid),
      };
      controllers.push(c);
      return c;
    },
    async api(path, init = {}) {
      const res = await fetch(`${worker.url}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          Authorization: `Bearer ${TENANT_KEY}`,
          ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          ...(init.idempotencyKey ? { 'Idempotency-Key': init.idempotencyKey } : {}),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: res.status, body: (await res.json()) as ApiBody };
    },
    check: (settled = true) => checkLedger(ledger.db, kube, ns.name, { settled }),
    async stop() {
      await Promise.all(controllers.map((c) => c.proc.stop()));
      await worker.stop();
      await ns.remove();
      await ledger.drop();
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForExit(pid: number): Promise<void> {
  while (isAlive(pid)) await new Promise((r) => setTimeout(r, 100));
}
