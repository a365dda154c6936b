// `node controller/main.ts` as a real child process against the local stack, registered with
// the stack's run dir (cleaned up with everything else), with its health/metrics port. It
// authenticates as its namespace's modeldock-controller ServiceAccount (installed on first use,
// test/support/install.ts); its /metrics is read with the monitoring ServiceAccount's token.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { freeServerPort } from '../../scripts/testenv/net.ts';
import { startProcess, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { parsePrometheus } from '../../schema/prom-text.ts';
import { installModelDock, type InstallTarget } from './install.ts';
import { installEnv } from '../../scripts/testenv/install.ts';
import { HttpAnswerError } from './wait.ts';

export interface ControllerProcess {
  name: string;
  proc: ManagedProcess;
  port: number;
  /** /metrics, read with a token bound to modeldock-metrics-reader. */
  metrics(): Promise<string>;
  /** False once the process exited (crash point, lost lease, SIGKILL). */
  alive(): boolean;
}

/** Leases shortened for tests (4 s / 3 s / 0.5 s); everything else is production code. */
export const TEST_LEASE_ENV: Record<string, string> = {
  LEASE_DURATION_MS: '4000',
  LEASE_RENEW_DEADLINE_MS: '3000',
  LEASE_RETRY_PERIOD_MS: '500',
};

export async function startController(
  name: string,
  namespace: string,
  env: Record<string, string> = {},
  waitReady = true,
  on?: InstallTarget,
): Promise<ControllerProcess> {
  const stack = inject('stack');
  const install = await installModelDock(namespace, {}, on);
  // The controller listens on every address (METRICS_PORT): a port below the ephemeral range, which no
  // outgoing connection can take between this pick and its listen (one did: EADDRINUSE in a full run).
  const port = await freeServerPort();
  const proc = await startProcess(
    {
      name,
      command: process.execPath, // Node 24, as vitest runs on it
      args: [join(repoRoot, 'controller/main.ts')],
      cwd: repoRoot,
      logDir: stack.logDir,
      env: {
        KUBECONFIG: install.kubeconfig,
        // Suites without a ledger database say so, as an installer would (else: exit with a reason).
        ...(env.DATABASE_URL ? {} : { LEDGER: 'off' }),
        // The image policy is required with the ledger: any registry (`*`) unless a suite sets its list.
        ALLOWED_IMAGE_REGISTRIES: '*',
        ...installEnv(namespace),
        METRICS_PORT: String(port),
        POD_NAME: name,
        LOG_LEVEL: 'debug',
        ...TEST_LEASE_ENV,
        ...env,
      },
      ready: async () => (await fetch(`http://127.0.0.1:${port}/${waitReady ? 'readyz' : 'healthz'}`)).ok,
      timeoutMs: 30_000,
    },
    stack.runDir,
  );
  return {
    name,
    proc,
    port,
    metrics: () => readMetrics(port),
    alive: () => isAlive(proc.pid),
  };
}

/** GET /metrics with the monitoring ServiceAccount's token (10 s deadline); throws unless 200 (an HttpAnswerError with the status). */
export async function readMetrics(port: number, token: string | undefined = inject('stack').metricsToken): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  if (res.status !== 200) throw new HttpAnswerError(`GET :${port}/metrics`, res.status, body);
  return body;
}

/** Sum of the samples of `name` in Prometheus text whose labels pass `where`. */
export function metricSum(text: string, name: string, where: (labels: Record<string, string>) => boolean = () => true): number {
  return parsePrometheus(text)
    .filter((s) => s.name === name && where(s.labels))
    .reduce((sum, s) => sum + s.value, 0);
}

/** True while this controller process holds the leader lease (leader_election_master_status 1); a failed scrape throws. */
export async function isLeading(c: ControllerProcess): Promise<boolean> {
  return metricSum(await c.metrics(), 'leader_election_master_status') === 1;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True while the process is stopped (SIGSTOP), from /proc. */
export function isFrozen(pid: number): boolean {
  return /^\d+ \(.*\) T /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}
