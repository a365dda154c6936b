// What every benchmark gets: the local stack (started once per `npm run bench`, ModelDock's k8s/
// installed as shipped), and helpers to start what a benchmark needs on it — a migrated ledger
// database, the Worker in workerd, a controller process as its namespace's ServiceAccount, a
// namespace with ModelDock installed, extra KWOK nodes. Everything started is stopped by
// `cleanup()` (the runner calls it after each benchmark), and the stack's run dir records every
// pid, so a hard-killed run is cleaned up by the next start.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../../controller/runtime/errors.ts';
import type { KubeClient } from '../../controller/runtime/kube.ts';
import { tenantLabels } from '../../controller/tenant/namespace.ts';
import { adminClient, applyKustomization, CLUSTER_ROLE_BINDINGS, controllerCredentials, installEnv, writeNamespaceOverlay, type OverlayPatches } from '../../scripts/testenv/install.ts';
import { freePort } from '../../scripts/testenv/net.ts';
import { liveRecordedPids, startProcess, tailFile, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { repoRoot, type StackInfo } from '../../scripts/testenv/stack.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../../test/support/ledger-database.ts';
import { startWorker, type WorkerInstance } from '../../test/support/worker.ts';
import { cmdline } from './proc-stats.ts';
import { shippedEnv, shippedNodeFlags } from '../../test/support/shipped-controller.ts';

export interface BenchStack extends StackInfo {
  metricsToken: string;
}

export interface Controller {
  proc: ManagedProcess;
  port: number;
  metrics(): Promise<string>;
}

/** What B3 leaves converged for B5 (idle) and B6 (memory). */
export interface Converged {
  n: number;
  namespace: string;
  baselineNamespace: string;
  controller: Controller;
  /** DATABASE_URL the controller uses (a statement-counting proxy in front of its ledger). */
  statements: string[];
}

export interface BenchContext {
  quick: boolean;
  shared: { converged?: Converged };
  stack: BenchStack;
  admin: KubeClient;
  log(msg: string): void;
  /** Registers a cleanup step (run in reverse order after the benchmark). */
  defer(fn: () => Promise<unknown>): void;
  ledger(): Promise<LedgerDatabase>;
  worker(databaseUrl: string, keys: Record<string, string>, vars?: Record<string, string>): Promise<WorkerInstance>;
  /**
   * A namespace with ModelDock installed as a user installs it (with the operator's `patches`:
   * file name → target and content, in the overlay's system or gateway part); returns its name and
   * the controller's kubeconfig.
   */
  namespace(prefix: string, patches?: OverlayPatches): Promise<{ name: string; kubeconfig: string }>;
  controller(name: string, ns: { name: string; kubeconfig: string }, env: Record<string, string>): Promise<Controller>;
  /** pid of a control-plane component of the stack (kube-controller-manager, kube-apiserver, …). */
  componentPid(name: string): number;
  cleanup(): Promise<void>;
}

export function createContext(started: BenchStack | undefined, quick: boolean, log: (m: string) => void): BenchContext {
  const need = (): BenchStack => {
    if (!started) throw new Error('this benchmark needs the local stack (it was not started)');
    return started;
  };
  let adminCache: KubeClient | undefined;
  let deferred: Array<() => Promise<unknown>> = [];
  const defer = (fn: () => Promise<unknown>) => deferred.push(fn);
  return {
    quick,
    shared: {},
    get stack() {
      return need();
    },
    get admin() {
      return (adminCache ??= adminClient(need().kubeconfig));
    },
    log,
    defer,
    async ledger() {
      const l = await createLedgerDatabase(need());
      defer(() => l.drop());
      return l;
    },
    async worker(databaseUrl, keys, vars = {}) {
      // A benchmark measures, it asserts nothing: a retry of wrangler's dev proxy is printed
      // (startWorker logs each one), not an error that ends the run.
      const w = await startWorker({ databaseUrl, keys, vars, stack: need(), allowTransportRetries: true });
      defer(() => w.stop());
      return w;
    },
    async namespace(prefix, patches = {}) {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`;
      const admin = adminClient(need().kubeconfig);
      await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      defer(async () => {
        await Promise.all(CLUSTER_ROLE_BINDINGS.map((b) => admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${b}-${name}`).catch(() => undefined)));
        // The install's gateway and tenant namespaces carry its installation label.
        const installed = await admin.list<{ metadata: { name: string } }>('/api/v1/namespaces', { labelSelector: `modeldock.io/instance=${name}` }).catch(() => ({ items: [] }));
        await Promise.all([name, ...installed.items.map((n) => n.metadata.name)].map((n) => admin.delete(`/api/v1/namespaces/${n}`).catch(() => undefined)));
      });
      const dir = writeNamespaceOverlay(repoRoot, join(need().runDir, 'installs', name), name, patches);
      await applyKustomization(need(), dir);
      // ModelServices made by hand here are reconciled in place: the namespace stands in for a
      // tenant's (the admission policies let the controller write only in one, docs/tenancy.md).
      await admin.mergePatch(`/api/v1/namespaces/${name}`, { metadata: { labels: tenantLabels('bench', undefined) } });
      const creds = await controllerCredentials(need(), name, join(dir, 'controller.kubeconfig'), 24 * 3600);
      return { name, kubeconfig: creds.kubeconfig };
    },
    async controller(name, ns, env) {
      const port = await freePort();
      const proc = await startProcess(
        {
          name,
          command: process.execPath,
          // Node as the shipped manifest runs it (its flags and NODE_OPTIONS): the bench runs what users run.
          args: [...shippedNodeFlags(), join(repoRoot, 'controller/main.ts')],
          cwd: repoRoot,
          logDir: need().logDir,
          env: { KUBECONFIG: ns.kubeconfig, ...installEnv(ns.name), METRICS_PORT: String(port), POD_NAME: name, LOG_LEVEL: 'warn', ALLOWED_IMAGE_REGISTRIES: '*', ...shippedEnv(['NODE_OPTIONS']), ...env },
          ready: async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
          timeoutMs: 60_000,
        },
        need().runDir,
      );
      defer(() => proc.stop());
      const metrics = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${need().metricsToken}` } }).catch((err: unknown) => {
          throw new Error(`controller ${name}'s /metrics unreachable (${errorMessage(err)}); the last lines of its log:\n${tailFile(proc.logFile, 15)}`);
        });
        const text = await res.text();
        if (!res.ok) throw new Error(`controller /metrics answered ${res.status}: ${text.slice(0, 200)}`);
        return text;
      };
      return { proc, port, metrics };
    },
    componentPid(component) {
      for (const pid of liveRecordedPids(need().runDir)) {
        try {
          if ((cmdline(pid)[0] ?? '').endsWith(`/${component}`)) return pid;
        } catch {
          /* gone */
        }
      }
      throw new Error(`no ${component} process in ${need().runDir}`);
    },
    async cleanup() {
      const steps = deferred.reverse();
      deferred = [];
      for (const s of steps) await s().catch((err: unknown) => log(`cleanup: ${err instanceof Error ? err.message : String(err)}`));
    },
  };
}

/** A KubeConfig for the stack's admin (client-node's generated clients, watches). */
export function adminKubeConfig(stack: StackInfo): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(stack.kubeconfig);
  return kc;
}
