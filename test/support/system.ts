// The whole of ModelDock for end-to-end tests: a migrated ledger database, the Worker in
// workerd (wrangler dev) serving the tenant API, and the controller as real child processes
// (`node controller/main.ts`) against the real control plane — each restartable and killable,
// so crash points can be injected and recovery observed.
import { expect, inject } from 'vitest';
import { createDatabaseSecret } from '../../scripts/testenv/install.ts';
import { checkLedger, type Drift } from '../../controller/ledger/check.ts';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { createLedgerDatabase, type LedgerDatabase } from './admission.ts';
import type { DatabaseStack } from './db.ts';
import { startController, type ControllerProcess } from './controller.ts';
export type { ControllerProcess };
import { installModelDock } from './install.ts';
import { createNamespace, kubeClients } from './kube.ts';
import { ensureCrd } from './operator.ts';
import { waitFor } from './wait.ts';
import { startWorker, type WorkerInstance } from './worker.ts';

export const TENANT = 'acme';
export const TENANT_KEY = 'acme-e2e-key-0123456789abcdef';

export interface System {
  ledger: LedgerDatabase;
  namespace: string;
  worker: WorkerInstance;
  kube: KubeClient;
  /** Starts a controller process (leader-elected) with extra env, e.g. MODELDOCK_CRASH_AT. */
  startController(name: string, env?: Record<string, string>, waitReady?: boolean): Promise<ControllerProcess>;
  api(path: string, init?: { method?: string; body?: unknown; idempotencyKey?: string }): Promise<{ status: number; body: ApiBody }>;
  /** POSTs `count` small admissions (cpu 100m, memory 128Mi, 1 replica unless overridden); returns their ids. */
  admit(count: number, over?: Record<string, unknown>): Promise<string[]>;
  /** Waits until every admission is in `state`. */
  untilState(ids: string[], state: string, timeoutMs?: number): Promise<void>;
  check(settled?: boolean): Promise<Drift[]>;
  stop(): Promise<void>;
}

// The API's JSON, loosely typed for assertions.
export type ApiBody = Record<string, unknown> & { error?: { code: string; message: string } };

export async function startSystem(
  opts: { quota?: string[]; workerVars?: Record<string, string>; /** Default: the stack's MariaDB. */ database?: DatabaseStack } = {},
): Promise<System> {
  const { kc, core } = kubeClients();
  const kube = new KubeClient({ kc });
  const ledger = await createLedgerDatabase(opts.database);
  await ledger.setQuota(TENANT, ...(opts.quota ?? ['cpu=16', 'memory=64Gi', 'nvidia.com/gpu=4', 'modelservices=1000']));
  const ns = await createNamespace(core, 'e2e');
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
  // ModelDock as a user installs it, with the ledger database in the Secret the Deployment reads.
  await installModelDock(ns.name);
  await createDatabaseSecret(inject('stack'), ns.name, ledger.url);
  await ensureCrd(kube, ns.name);
  const worker = await startWorker({ databaseUrl: ledger.url, keys: { [TENANT]: TENANT_KEY }, vars: opts.workerVars });
  const controllers: ControllerProcess[] = [];
  let n = 0;
  const api: System['api'] = async (path, init = {}) => {
    const res = await worker.fetch(path, {
      method: init.method ?? 'GET',
      headers: {
        Authorization: `Bearer ${TENANT_KEY}`,
        ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...(init.idempotencyKey ? { 'Idempotency-Key': init.idempotencyKey } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as ApiBody };
  };

  return {
    ledger,
    namespace: ns.name,
    worker,
    kube,
    async startController(name, env = {}, waitReady = true) {
      const c = await startController(name, ns.name, { DATABASE_URL: ledger.url, ...env }, waitReady);
      controllers.push(c);
      return c;
    },
    api,
    async admit(count, over = {}) {
      return Promise.all(
        Array.from({ length: count }, async () => {
          const i = ++n;
          const body = { name: `m${i}`, image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' }, ...over };
          const r = await api('/requests', { method: 'POST', body, idempotencyKey: `${ns.name}-${i}` });
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          return r.body.id as string;
        }),
      );
    },
    async untilState(ids, state, timeoutMs = 90_000) {
      await waitFor(`${ids.length} admission(s) → ${state}`, async () => {
        const states = await Promise.all(ids.map(async (id) => (await api(`/requests/${id}`)).body.state));
        return states.every((s) => s === state);
      }, { timeoutMs });
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
