// The whole local stack: Go binaries (built once, cached by version), MariaDB with
// ModelDock's database and user, ps-http-sim in front of it, and the Kubernetes control
// plane with a KWOK node. Used by the vitest global setup and by `npm run stack`.
// Opt-in (`vitess: true` or MODELDOCK_VITESS=1): the sharded ledger on Vitess too
// (scripts/testenv/vitess.ts), migrated once, reachable at `info.vitess.databaseUrl`.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, startControlPlane, type ControlPlane } from './kube.ts';
import { ensureMariaDB, mysqlFromEnv, provision, type MysqlTarget } from './mariadb.ts';
import { pidFile, removePrivateDirs, StackError, stopLeftovers, type ManagedProcess } from './proc.ts';
import { checkHostRestored, clearStaleNode, prepareRealNode, startRealNode, type RealNode } from './node.ts';
import { startPsHttpSim } from './ps-http-sim.ts';
import { startVitessLedger, type VitessInfo } from './vitess.ts';

export const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** What tests and people need to reach the stack. Serializable (vitest `provide`). */
export interface StackInfo {
  runDir: string;
  logDir: string;
  binDir: string;
  kubeconfig: string;
  kubeServer: string;
  /** DATABASE_URL of the stack's own database, for `@planetscale/database` `connect({ url })`. */
  databaseUrl: string;
  database: string;
  mysql: MysqlTarget;
  /** The sharded ledger (vtgate behind ps-http-sim), when started with `vitess`. */
  vitess?: VitessInfo;
  /** The real node (a kubelet with containerd), when started with `realNode`; `netns`: its network namespace (/proc/<pid>/ns/net). */
  realNode?: { name: string; registry: string; netns: string };
  /** Every cluster, c1 first (the one `kubeconfig` names); c2… share its etcd. */
  clusters: StackCluster[];
}

/** One Kubernetes cluster of the stack, reachable as its admin. */
export interface StackCluster {
  name: string;
  kubeconfig: string;
  server: string;
  /** Its files (pki, kubeconfig; what is installed on it may put its own there): the run dir for c1. */
  dir: string;
}

/** A stack started with `vitess` (the `vitess` vitest project's). */
export type VitessStackInfo = StackInfo & { vitess: VitessInfo };

export interface Stack {
  info: StackInfo;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Directory for pids, kubeconfig, pki, etcd data and logs (wiped at start). */
  runDir: string;
  database?: string;
  log?: (msg: string) => void;
  /** Also start the Vitess backend (default: MODELDOCK_VITESS=1). */
  vitess?: boolean;
  /** A directory that already holds every binary needed (skips scripts/testenv/build.sh). */
  binDir?: string;
  /** Extra kube-controller-manager flags (bench B6L: its client QPS). */
  kcmArgs?: string[];
  /** Also start a real node next to the KWOK node (scripts/testenv/node.ts; Linux, root). */
  realNode?: boolean;
  /** How many Kubernetes clusters (default 1; the real node joins c1). docs/multi-cluster.md, "Local stack". */
  clusters?: number;
}

export const vitessFromEnv = (env: NodeJS.ProcessEnv = process.env): boolean => env.MODELDOCK_VITESS === '1';

/** Builds (or finds cached) binaries; returns the directory holding them all. */
export function buildBinaries(log: (msg: string) => void): Promise<string> {
  return new Promise((resolveDir, reject) => {
    const child = execFile('bash', [join(repoRoot, 'scripts/testenv/build.sh')], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      if (err) {
        reject(new StackError('build', err.message, stderr.split('\n').slice(-30).join('\n')));
        return;
      }
      resolveDir(stdout.trim().split('\n').at(-1) ?? '');
    });
    child.stderr?.on('data', (d: Buffer) => log(d.toString().trimEnd()));
  });
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const parts = await startParts(opts, { vitess: opts.vitess ?? vitessFromEnv(), realNode: opts.realNode ?? false, clusters: opts.clusters ?? 1 });
  const info: StackInfo = {
    ...parts.info,
    kubeconfig: parts.kube.kubeconfig,
    kubeServer: parts.kube.server,
    ...(parts.vitess ? { vitess: parts.vitess } : {}),
    ...(parts.node ? { realNode: { name: parts.node.name, registry: parts.node.registry, netns: parts.node.netns } } : {}),
    clusters: parts.clusters,
  };
  return parts.done(info);
}

/**
 * Starts the requested parts side by side. Whatever happens, a start that throws leaves nothing
 * running: every part is allowed to settle first (a part still starting when another failed would
 * otherwise hand its processes over after the clean-up), then everything is stopped, including
 * any pid a part recorded but never handed back (a part that failed half-way).
 */
async function startParts(opts: StackOptions, want: { vitess: boolean; realNode: boolean; clusters: number }) {
  const log = opts.log ?? ((m: string) => console.error(m));
  const runDir = resolve(opts.runDir);
  const logDir = join(runDir, 'logs');
  await resetRunDir(runDir, logDir);

  const t0 = Date.now();
  const binDir = opts.binDir ?? (await buildBinaries(log));
  const mysql = mysqlFromEnv();
  const database = opts.database ?? 'modeldock';
  const processes: ManagedProcess[] = [];
  // The real node's network and PKI exist before the API server, which binds the node's veth.
  const nodePrep = want.realNode ? await prepareRealNode(runDir, logDir) : undefined;
  let node: RealNode | undefined;
  const stop = async () => {
    // The node first: its kubelet would restart what its teardown kills; then the host must read as before.
    const nodeStopped = (node ? node.stop() : nodePrep?.network.holder.stop())?.catch((err: unknown) => err);
    node = undefined;
    const nodeError = await nodeStopped;
    const stopped = processes.splice(0).reverse();
    await Promise.all(stopped.map((p) => p.stop()));
    await stopLeftovers(runDir, new Set(stopped.map((p) => p.pid)));
    removePrivateDirs(runDir);
    if (nodeError) throw nodeError;
    if (nodePrep) await checkHostRestored(runDir, nodePrep.hostBefore);
  };
  const [sim, kube, vitess] = await Promise.allSettled([
    (async () => {
      await ensureMariaDB(mysql.port);
      await provision(mysql, database);
      const s = await startPsHttpSim({ binary: join(binDir, 'ps-http-sim'), mysql, database, logDir, runDir });
      processes.push(s.process);
      return s;
    })(),
    startControlPlane({ binDir, runDir, logDir, kcmArgs: opts.kcmArgs ?? [], ...(nodePrep ? { realNode: nodePrep.pki } : {}) }).then((cp) => {
      processes.push(...cp.processes);
      return cp;
    }),
    want.vitess
      ? startVitessLedger({ binDir, runDir, logDir, log }).then((v) => {
          processes.push(...v.processes);
          return v.info;
        })
      : undefined,
  ]);
  if (sim.status === 'rejected' || kube.status === 'rejected' || vitess.status === 'rejected') {
    await stop();
    throw firstFailure([sim, kube, vitess], log);
  }
  // Further clusters on the first one's etcd, one after another (each start is CPU-heavy).
  const clusters: StackCluster[] = [{ name: 'c1', kubeconfig: kube.value.kubeconfig, server: kube.value.server, dir: runDir }];
  for (let i = 2; i <= want.clusters; i++) {
    const name = `c${i}`;
    const dir = join(runDir, 'clusters', name);
    try {
      const cp: ControlPlane = await startCluster({ binDir, runDir, logDir, etcdUrl: kube.value.etcdUrl, dir, further: { name } });
      processes.push(...cp.processes);
      clusters.push({ name, kubeconfig: cp.kubeconfig, server: cp.server, dir });
      log(`[stack] cluster ${name} up at ${cp.server}`);
    } catch (err) {
      await stop();
      throw err;
    }
  }
  if (nodePrep) {
    const cp = kube.value;
    try {
      node = await startRealNode({ binDir, runDir, logDir, log, network: nodePrep.network, pki: nodePrep.pki, registryDir: nodePrep.registryDir, kubeconfig: cp.kubeconfig, apiServer: cp.server, apiCa: cp.caFile });
    } catch (err) {
      await stop();
      throw err;
    }
  }
  const info = {
    runDir,
    logDir,
    binDir,
    databaseUrl: sim.value.url,
    database,
    mysql: { host: mysql.host, port: mysql.port, user: mysql.user, password: mysql.password },
  };
  const done = <T extends typeof info>(full: T): { info: T; stop: () => Promise<void> } => {
    writeFileSync(join(runDir, 'stack.json'), JSON.stringify(full, null, 2));
    log(`[stack] up in ${((Date.now() - t0) / 1000).toFixed(1)} s (logs: ${logDir})`);
    return { info: full, stop };
  };
  return { info, kube: kube.value, vitess: vitess.value, node, clusters, done };
}

/** Stops what a hard-killed earlier run left (by its pids), removes its files, and starts an empty run dir. */
async function resetRunDir(runDir: string, logDir: string): Promise<void> {
  await stopLeftovers(runDir);
  await clearStaleNode(runDir);
  removePrivateDirs(runDir);
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  writeFileSync(pidFile(runDir), '');
}

/** The first part's error is thrown; the others' are logged, so no failure goes unseen. */
function firstFailure(results: PromiseSettledResult<unknown>[], log: (msg: string) => void): unknown {
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  for (const extra of errors.slice(1)) log(`[stack] also failed: ${extra instanceof Error ? extra.message : String(extra)}`);
  return errors[0];
}
