// A stack whose start fails leaves nothing running. The whole stack (control plane, ps-http-sim,
// the Vitess ledger) is started for real in a run dir of its own, and one component of the Vitess
// ledger (the last part of the stack to come up) is made to fail through
// MODELDOCK_TESTENV_FAIL_START (scripts/testenv/proc.ts: the component is spawned, then its start
// fails as a readiness timeout would). Then every pid the run recorded must be gone, no process
// may name the run dir or its private directory, and the private directory must be removed.
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { liveRecordedPids, privateDirPrefix, recordedPids, removePrivateDirs, StackError, stopLeftovers } from '../../scripts/testenv/proc.ts';
import { startStack } from '../../scripts/testenv/stack.ts';

const FAIL = 'MODELDOCK_TESTENV_FAIL_START';
const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

describe.each([
  // The case: the Vitess MariaDB fails within a second or two, while the control plane is
  // still starting (a cold kube-apiserver alone takes several seconds).
  { component: 'vitess-mariadb', started: [...CONTROL_PLANE, 'ps-http-sim', 'vitess-mariadb'] },
  // The last process the Vitess ledger starts: its MariaDB and vtcombo are up by then.
  { component: 'ps-http-sim-vitess', started: [...CONTROL_PLANE, 'ps-http-sim', 'vitess-mariadb', 'vtcombo', 'ps-http-sim-vitess'] },
])('a start whose $component fails', ({ component, started }) => {
  const runDir = `${inject('stack').runDir}-start-failure-${component}`;

  afterAll(async () => {
    // Only matters when the test failed: leave nothing behind either way.
    await stopLeftovers(runDir);
    removePrivateDirs(runDir);
  });

  test('stops everything it started, by pid, and removes its private directory', { timeout: 300_000 }, async () => {
    process.env[FAIL] = component;
    const error = await startStack({ runDir, vitess: true, binDir: inject('stack').binDir, log: () => undefined })
      .then(() => undefined, (err: unknown) => err)
      .finally(() => delete process.env[FAIL]);

    expect(error).toBeInstanceOf(StackError);
    expect((error as StackError).component).toBe(component);

    // Every process the run recorded is gone (a recorded pid still running as the process it named).
    const pids = recordedPids(runDir);
    const live = liveRecordedPids(runDir);
    expect(live.map((pid) => [pid, signalZero(pid)])).toEqual([]);
    expect(processesNaming([runDir, privateDirPrefix(runDir)])).toEqual([]);
    expect(privateDirsLeft(runDir)).toEqual([]);
    // Proof that the run got as far as intended: every component was spawned (wrote its log), so
    // the start waited for the control plane instead of throwing while it was still coming up.
    expect(readdirSync(join(runDir, 'logs'))).toEqual(expect.arrayContaining(started.map((name) => `${name}.log`)));
    expect(pids.length).toBeGreaterThanOrEqual(started.length);
  });
});

/** What `kill(pid, 0)` says: 'alive', or the error code (ESRCH: no such process). */
function signalZero(pid: number): string {
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'unknown';
  }
}

/** Every process whose command line contains one of `needles`, as "pid: command line". */
function processesNaming(needles: string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // exited meanwhile
    }
    if (needles.some((n) => cmdline.includes(n))) found.push(`${entry}: ${cmdline}`);
  }
  return found;
}

/** This run dir's private directories still present in the temp roots. */
function privateDirsLeft(runDir: string): string[] {
  const prefix = privateDirPrefix(runDir);
  return [...new Set([tmpdir(), '/tmp'])].flatMap((root) => readdirSync(root).filter((name) => name.startsWith(prefix)).map((name) => join(root, name)));
}
