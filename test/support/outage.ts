// Outages of the real stack's components, for the outage suites (test/e2e/outage-*.test.ts):
//  - an API server that refuses ModelService creates: a ValidatingAdmissionPolicy (built into
//    kube-apiserver, CEL) bound to ONE namespace, so suites running beside it are untouched;
//  - kube-apiserver (or another component: kube-controller-manager) stopped and started again
//    with the same command line or a rewritten one (the stack's own process, found through the
//    run dir's pid file; the new one is registered there too);
//  - every database route probed at once while the database is hung or down (probeEveryRoute);
//    the suite-owned MariaDB that can be restarted is private-mariadb.ts;
//  - holdOutage: the one deliberate sleep of the outage suites, keeping an outage going for the
//    length the test is about (never used to wait for something to happen).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { isApiError } from '../../controller/runtime/errors.ts';
import type { KubeClient } from '../../controller/runtime/kube.ts';
import { paths } from '../../controller/runtime/kube.ts';
import { liveRecordedPids, startProcess } from '../../scripts/testenv/proc.ts';
import { makeModelService } from './builders.ts';
import type { System } from './system.ts';
import { waitFor } from './wait.ts';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
export const DENIAL_MESSAGE = 'modeldock outage test: ModelService creates are refused';

export interface Denial {
  /** Removes the policy and waits until a create is admitted again. */
  remove(): Promise<void>;
}

/** Probes with a server-side dry run: admission policies run on it, nothing is stored. */
async function createRefused(kube: KubeClient, ns: string): Promise<boolean> {
  try {
    await kube.request('POST', paths.modelServices(ns), { query: { dryRun: 'All' }, body: makeModelService('outage-probe').namespace(ns).obj() });
    return false;
  } catch (err) {
    if (isApiError(err) && err.message.includes(DENIAL_MESSAGE)) return true;
    throw err;
  }
}

/** Every ModelService CREATE in `ns` is refused (422 Invalid, from the policy) until remove(). */
export async function denyModelServiceCreates(kube: KubeClient, ns: string): Promise<Denial> {
  const name = `modeldock-outage-${ns}`;
  await kube.request('POST', `${ADMISSION}/validatingadmissionpolicies`, {
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['modeldock.io'], apiVersions: ['*'], operations: ['CREATE'], resources: ['modelservices'] }] },
        validations: [{ expression: 'false', message: DENIAL_MESSAGE }],
      },
    },
  });
  await kube.request('POST', `${ADMISSION}/validatingadmissionpolicybindings`, {
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    },
  });
  // The API server loads policies through an informer: wait until this one is in force.
  await waitFor('the ValidatingAdmissionPolicy to refuse creates', () => createRefused(kube, ns), { timeoutMs: 30_000 });
  return {
    async remove() {
      await kube.request('DELETE', `${ADMISSION}/validatingadmissionpolicybindings/${name}`);
      await kube.request('DELETE', `${ADMISSION}/validatingadmissionpolicies/${name}`);
      await waitFor('creates to be admitted again', async () => !(await createRefused(kube, ns)), { timeoutMs: 30_000 });
    },
  };
}

interface ProcInfo {
  pid: number;
  argv: string[];
  env: Record<string, string>;
}

function procInfo(pid: number): ProcInfo | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const env = Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter((kv) => kv.includes('='))
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    return { pid, argv, env };
  } catch {
    return undefined; // exited
  }
}

/**
 * The live process of this run's stack whose binary is `binary` (a pid of the run dir's pid file),
 * and whose arguments `match` accepts (one cluster's on a stack of several).
 */
export function stackProcess(binary: string, match: (argv: readonly string[]) => boolean = () => true): ProcInfo {
  const { runDir } = inject('stack');
  const pids = liveRecordedPids(runDir);
  const found = pids.map(procInfo).filter((p): p is ProcInfo => p !== undefined && p.argv[0]?.endsWith(`/${binary}`) === true && match(p.argv));
  const live = found.at(-1);
  if (!live) throw new Error(`no live ${binary} among the stack's processes in ${runDir}`);
  return live;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export interface Restart {
  /** When the old process had exited (the outage begins). */
  stoppedAt: number;
  /**
   * Starts the same command line again — or the one `rewrite` makes of its arguments — and
   * resolves once it serves; returns when it served.
   */
  start(rewrite?: (args: string[]) => string[]): Promise<number>;
}

/**
 * Holds an outage for `ms` counted from `since` (default: now) and returns when it ended. NOT
 * synchronization: the length of the outage is what the test is about (the database frozen for
 * FREEZE_MS, MariaDB down for DOWN_MS); to wait for something to happen, use waitFor.
 */
export async function holdOutage(ms: number, since = Date.now()): Promise<number> {
  await sleep(Math.max(0, since + ms - Date.now()));
  return Date.now();
}

/** SIGTERM's grace period before SIGKILL (kube-apiserver drains its requests first). */
const TERM_GRACE_MS = 10_000;

/** Stops the stack's process running `binary` (SIGTERM, then SIGKILL). Call `start()` to bring it back; `ready` tells it serves. */
export async function stopStackProcess(binary: string, ready: () => Promise<boolean>, match?: (argv: readonly string[]) => boolean): Promise<Restart> {
  const { runDir, logDir } = inject('stack');
  const old = stackProcess(binary, match);
  process.kill(old.pid, 'SIGTERM');
  const exitedOnTerm = await waitFor(`the old ${binary} to exit on SIGTERM`, async () => !alive(old.pid), { timeoutMs: TERM_GRACE_MS, intervalMs: 100 }).then(
    () => true,
    () => false, // the grace period is over: SIGKILL below
  );
  if (!exitedOnTerm) process.kill(old.pid, 'SIGKILL');
  await waitFor(`the old ${binary} to exit`, async () => !alive(old.pid), { timeoutMs: 10_000 });
  const stoppedAt = Date.now();
  return {
    stoppedAt,
    async start(rewrite = (args) => args) {
      const [command, ...args] = old.argv;
      if (!command) throw new Error(`${binary}: empty command line`);
      await startProcess({ name: `${binary}-restarted`, command, args: rewrite(args), env: old.env, logDir, ready, timeoutMs: 60_000 }, runDir);
      return Date.now();
    },
  };
}

/**
 * Stops the stack's kube-apiserver (on a stack of several clusters, `cluster`'s: a further cluster's
 * keeps its objects under its own etcd prefix). Call `start()` to bring it back.
 */
export const stopApiServer = (kube: KubeClient, cluster?: string): Promise<Restart> =>
  stopStackProcess(
    'kube-apiserver',
    async () => kube.get('/api/v1/namespaces/default').then(() => true),
    cluster === undefined ? undefined : (argv) => argv.includes(`--etcd-prefix=/clusters/${cluster}/registry`),
  );

/** The `--secure-port` of a control-plane component's command line. */
export function securePort(binary: string): number {
  const flag = stackProcess(binary).argv.find((a) => a.startsWith('--secure-port='));
  const port = Number(flag?.split('=')[1]);
  if (!Number.isInteger(port)) throw new Error(`${binary}: no --secure-port on its command line`);
  return port;
}

export interface RouteAnswer {
  route: string;
  status: number;
  code: string | undefined;
  ms: number;
}

/** Calls every route of the tenant API that touches the database, at once; each answer with its latency. */
export async function probeEveryRoute(sys: Pick<System, 'api'>, id: string, n: number): Promise<RouteAnswer[]> {
  const body = { name: `probe${n}`, image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } };
  const calls: Array<[string, () => ReturnType<System['api']>]> = [
    ['POST /requests', () => sys.api('/requests', { method: 'POST', body, idempotencyKey: `outage-probe-${n}` })],
    ['GET /requests', () => sys.api('/requests')],
    ['GET /requests/:id', () => sys.api(`/requests/${id}`)],
    ['DELETE /requests/:id', () => sys.api(`/requests/${id}`, { method: 'DELETE' })],
    ['GET /quota', () => sys.api('/quota')],
    ['GET /healthz', () => sys.api('/healthz')],
  ];
  return Promise.all(
    calls.map(async ([route, call]) => {
      const t0 = Date.now();
      const r = await call();
      return { route, status: r.status, code: r.body.error?.code, ms: Date.now() - t0 };
    }),
  );
}

/**
 * probeEveryRoute, round after round, until the clock reaches `until` (a round started before it
 * finishes); `check` sees every round's answers as they come (assert there: the state of the
 * outage is the one of that moment). `pauseMs` spaces the rounds: pacing, not synchronization.
 */
export async function probeRounds(
  sys: Pick<System, 'api'>,
  id: string,
  o: { until: number; pauseMs?: number; check: (answers: RouteAnswer[]) => void },
): Promise<RouteAnswer[]> {
  const all: RouteAnswer[] = [];
  while (Date.now() < o.until) {
    const answers = await probeEveryRoute(sys, id, all.length);
    o.check(answers);
    all.push(...answers);
    if (o.pauseMs) await sleep(Math.min(o.pauseMs, Math.max(0, o.until - Date.now())));
  }
  return all;
}
