// The whole of ModelDock for end-to-end tests: a migrated ledger database, the Worker in
// workerd (wrangler dev) serving the tenant API, and the controller as real child processes
// (`node controller/main.ts`) against the real control plane — each restartable and killable,
// so crash points can be injected and recovery observed.
import { expect, inject } from 'vitest';
import { createDatabaseSecret, installTenantNamespace } from '../../scripts/testenv/install.ts';
import { checkLedger, type Drift } from '../../scripts/operator/check.ts';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { createLedgerDatabase, type LedgerDatabase } from './ledger-database.ts';
import type { DatabaseStack } from './test-database.ts';
import { startController, type ControllerProcess } from './controller-process.ts';
export type { ControllerProcess };
import type { OverlayPatches } from '../../scripts/testenv/install.ts';
import { installModelDock } from './install.ts';
import { createNamespace, kubeClients } from './kube.ts';
import { ensureCrd } from './operator.ts';
import { waitFor, type WaitOptions } from './wait.ts';
import { tenantApi, untilAllHold, type ApiBody } from './tenant-api.ts';
import { startWorker, type WorkerInstance } from './worker.ts';

export const TENANT = 'acme';
export const TENANT_KEY = 'acme-e2e-key-0123456789abcdef';

export interface System {
  ledger: LedgerDatabase;
  /** Where ModelDock is installed: the controller, its lease, the database Secret. */
  namespace: string;
  /** TENANT's namespace, where its ModelServices, Deployments, Services and pods live (created by the controller). */
  tenantNamespace: string;
  worker: WorkerInstance;
  kube: KubeClient;
  /** Starts a controller process (leader-elected) with extra env, e.g. MODELDOCK_CRASH_AT. */
  startController(name: string, env?: Record<string, string>, waitReady?: boolean): Promise<ControllerProcess>;
  /** One call to the tenant API; an answer that is not JSON throws (an HttpAnswerError with its status and text). */
  api(path: string, init?: { method?: string; body?: unknown; idempotencyKey?: string }): Promise<{ status: number; body: ApiBody }>;
  /** POSTs `count` small admissions (cpu 100m, memory 128Mi, 1 replica unless overridden); returns their ids. */
  admit(count: number, over?: Record<string, unknown>): Promise<string[]>;
  /**
   * Polls GET `path` until `accept` returns a value. A 5xx ends the wait at once unless
   * `allow5xx`; a timeout reports the last status and body.
   */
  until<T>(what: string, path: string, accept: (body: ApiBody, status: number) => T | undefined | false, opts?: WaitOptions): Promise<T>;
  /** Polls GET /requests/{id} of every id until `holds` is true of each (the same rules as until); returns their last bodies. */
  untilAll(what: string, ids: string[], holds: (body: ApiBody) => boolean, opts?: WaitOptions): Promise<ApiBody[]>;
  /** untilAll: every admission is in `state` (default timeout 90 s). */
  untilState(ids: string[], state: string, opts?: number | WaitOptions): Promise<ApiBody[]>;
  /** Until TENANT's namespace exists: the controller creates it with the tenant's first delivery (one admission, made ready and released here if none was made yet). */
  tenantSpace(): Promise<void>;
  check(settled?: boolean): Promise<Drift[]>;
  /** Waits until check() finds no drift; a timeout reports the last drift found. */
  untilSettled(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}


export interface SystemOptions {
  quota?: string[];
  workerVars?: Record<string, string>;
  /** Default: the stack's MariaDB. */
  database?: DatabaseStack;
  /** Operator patches of the install (e.g. the gateway on the real node). */
  install?: OverlayPatches;
  /** After the install, before the Worker starts: more Worker vars (e.g. the gateway's URL and key). */
  beforeWorker?: (namespace: string) => Promise<Record<string, string>>;
  /** More tenants the Worker knows: tenant → key (TENANT is always there). */
  keys?: Record<string, string>;
}

export async function startSystem(opts: SystemOptions = {}): Promise<System> {
  const { kc, core } = kubeClients();
  const kube = new KubeClient({ kc });
  const ledger = await createLedgerDatabase(opts.database);
  await ledger.setQuota(TENANT, ...(opts.quota ?? ['cpu=16', 'memory=64Gi', 'nvidia.com/gpu=4', 'modelservices=1000']));
  const ns = await createNamespace(core, 'e2e');
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
  // ModelDock as a user installs it, with the ledger database in the Secret the Deployment reads.
  await installModelDock(ns.name, opts.install);
  await createDatabaseSecret(inject('stack'), ns.name, ledger.url);
  await ensureCrd(kube, ns.name);
  const extraVars = opts.beforeWorker ? await opts.beforeWorker(ns.name) : {};
  const worker = await startWorker({ databaseUrl: ledger.url, keys: { ...opts.keys, [TENANT]: TENANT_KEY }, vars: { ...extraVars, ...opts.workerVars } });
  const controllers: ControllerProcess[] = [];
  let n = 0;
  const api: System['api'] = tenantApi(worker, TENANT_KEY);
  const until: System['until'] = (what, path, accept, opts) =>
    waitFor(what, async (poll) => {
      const r = poll.answer(await api(path), `GET ${path}`);
      return accept(r.body, r.status);
    }, opts);
  const untilAll: System['untilAll'] = (what, ids, holds, opts) => untilAllHold(api, what, ids, holds, opts);

  const system: System = {
    ledger,
    namespace: ns.name,
    tenantNamespace: installTenantNamespace(ns.name, TENANT),
    worker,
    kube,
    async startController(name, env = {}, waitReady = true) {
      const c = await startController(name, ns.name, { DATABASE_URL: ledger.url, ...env }, waitReady);
      controllers.push(c);
      return c;
    },
    api,
    until,
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
    untilAll,
    async tenantSpace() {
      if (await kube.getOrUndefined(paths.namespace(system.tenantNamespace))) return;
      const [id] = await system.admit(1, { name: 'tenant-space' });
      await system.untilState([id!], 'ready');
      expect((await api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
      await system.untilState([id!], 'released');
    },
    untilState(ids, state, opts = {}) {
      const options = typeof opts === 'number' ? { timeoutMs: opts } : { timeoutMs: 90_000, ...opts };
      return untilAll(`${ids.length} admission(s) → ${state}`, ids, (b) => b.state === state, options);
    },
    check: (settled = true) => checkLedger(ledger.db, kube, ns.name, { settled }), // the installation of ns (installEnv)
    async untilSettled(timeoutMs = 30_000) {
      await waitFor('the ledger and the cluster to agree', async () => {
        const drift = await checkLedger(ledger.db, kube, ns.name, { settled: true });
        if (drift.length > 0) throw new Error(`${drift.length} drift(s): ${JSON.stringify(drift).slice(0, 1500)}`); // not yet
        return true;
      }, { timeoutMs });
    },
    async stop() {
      await Promise.all(controllers.map((c) => c.proc.stop()));
      // A transport retry reported at the Worker's stop fails the suite, after the cleanup.
      const retried = await worker.stop().then(
        () => undefined,
        (err: unknown) => err,
      );
      await ns.remove();
      await ledger.drop();
      if (retried) throw retried;
    },
  };
  return system;
}
