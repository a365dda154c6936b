// Child processes of the local stack: spawned with their output in a known log file,
// waited for with a readiness probe, and stopped with SIGTERM then SIGKILL.
// A start that fails throws a StackError naming the component and the tail of its log.
// Every pid is recorded in the run dir (`pids`), so a failed start, the exit of the test run
// and the next start can stop by pid whatever a run left behind.
// MODELDOCK_TESTENV_FAIL_START=<component>: that component is spawned, then its start fails as
// a readiness timeout would (stopped, StackError). Only for the failure-path test
// (test/integration/stack-start-failure.test.ts); nothing else sets it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export class StackError extends Error {
  readonly component: string;
  readonly logTail: string;
  constructor(component: string, reason: string, logTail = '') {
    super(`local stack: ${component} failed: ${reason}${logTail ? `\n--- last lines of ${component}'s log ---\n${logTail}` : ''}`);
    this.name = 'StackError';
    this.component = component;
    this.logTail = logTail;
  }
}

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logDir: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Resolves true once the component serves; polled until timeoutMs. */
  ready: () => Promise<boolean>;
  timeoutMs?: number;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

export function tailFile(path: string, lines = 30): string {
  if (!existsSync(path)) return '';
  const all = readFileSync(path, 'utf8').trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

/** Records every pid we start, so a later start can kill what a hard-killed run left behind. */
export function pidFile(runDir: string): string {
  return join(runDir, 'pids');
}

export async function startProcess(spec: ProcessSpec, runDir: string): Promise<ManagedProcess> {
  const { logFile, fd } = ownLogFile(spec.logDir, spec.name);
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', fd, fd],
      detached: true, // own process group: stop() takes the whole tree, Ctrl-C is handled by the parent
    });
  } finally {
    closeSync(fd);
  }
  let exited: string | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve();
    });
    child.once('error', (err) => {
      exited = err.message;
      resolve();
    });
  });
  const pid = child.pid;
  if (pid === undefined) {
    await exitedPromise;
    throw new StackError(spec.name, `could not spawn ${spec.command}: ${exited ?? 'unknown error'}`);
  }
  // With its start time: the pid alone may name another process by the time it is read (pid_max is 32768 here).
  appendFileSync(pidFile(runDir), `${pid} ${startTimeOf(pid) ?? ''}\n`);

  const stop = async (): Promise<void> => {
    if (exited !== undefined) return;
    signalGroup(pid, 'SIGTERM');
    const killed = await Promise.race([exitedPromise.then(() => true), sleep(2000).then(() => false)]);
    if (!killed) {
      signalGroup(pid, 'SIGKILL');
      await exitedPromise;
    }
  };

  if (process.env.MODELDOCK_TESTENV_FAIL_START === spec.name) {
    await stop();
    throw new StackError(spec.name, 'start made to fail by MODELDOCK_TESTENV_FAIL_START');
  }
  const deadline = Date.now() + (spec.timeoutMs ?? 60_000);
  for (;;) {
    if (exited !== undefined) {
      throw new StackError(spec.name, `exited during start-up (${exited})`, tailFile(logFile));
    }
    if (await spec.ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new StackError(spec.name, `not ready after ${spec.timeoutMs ?? 60_000} ms`, tailFile(logFile));
    }
    await sleep(250);
  }
  return { name: spec.name, pid, logFile, stop };
}

/**
 * A log file of the process's own: `<name>.log`, or `<name>-<n>.log` when an earlier process of the
 * same name has one in this log dir (two test files may each start a `ctl-a`: a test reading its
 * controller's log must read that controller's lines only).
 */
function ownLogFile(logDir: string, name: string): { logFile: string; fd: number } {
  for (let n = 1; ; n++) {
    const logFile = join(logDir, n === 1 ? `${name}.log` : `${name}-${n}.log`);
    try {
      return { logFile, fd: openSync(logFile, 'ax') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** A process's start time (clock ticks since boot, field 22 of /proc/<pid>/stat): with its pid, it names one process. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); // "pid (comm) state …": comm may hold spaces
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function records(runDir: string): Array<{ pid: number; start: string }> {
  const file = pidFile(runDir);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => {
      const [pid = '', start = ''] = line.split(' ');
      return { pid: Number(pid), start };
    })
    .filter((r) => Number.isInteger(r.pid) && r.pid > 1);
}

/** The pids recorded for this run directory, in start order (some may have exited, and their numbers been reused). */
export function recordedPids(runDir: string): number[] {
  return records(runDir).map((r) => r.pid);
}

/** The recorded processes that still run: same pid AND same start time, never a process that reused a pid. */
export function liveRecordedPids(runDir: string): number[] {
  return records(runDir)
    .filter((r) => r.start !== '' && startTimeOf(r.pid) === r.start)
    .map((r) => r.pid);
}

/** Kills (synchronously) every process started for this run directory that still runs: leftovers of a hard-killed run, or all at exit. */
export function killLeftovers(runDir: string, except: ReadonlySet<number> = new Set()): void {
  for (const pid of liveRecordedPids(runDir)) if (!except.has(pid)) signalGroup(pid, 'SIGKILL');
}

/**
 * killLeftovers, then waits (up to timeoutMs) until every recorded pid is gone. Waiting matters:
 * SIGKILL is asynchronous, a killed child of this process lingers as a zombie until the event
 * loop reaps it, and a dying server may still write into a directory about to be removed.
 */
export async function stopLeftovers(runDir: string, except: ReadonlySet<number> = new Set(), timeoutMs = 10_000): Promise<void> {
  killLeftovers(runDir, except);
  const deadline = Date.now() + timeoutMs;
  while (liveRecordedPids(runDir).some((pid) => !except.has(pid) && isAlive(pid)) && Date.now() < deadline) await sleep(50);
}

/**
 * True while `pid` exists. A zombie counts as gone unless it is our own child: this process reaps
 * its children as soon as the event loop runs, and until then `kill(pid, 0)` still finds them; a
 * zombie of another parent may never be reaped (a container's init that does not reap).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may contain spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state !== 'Z' || Number(ppid) === process.pid;
  } catch {
    return false;
  }
}

/** The user and group a process runs as. */
export interface Owner {
  uid: number;
  gid: number;
}

/** <run dir>/private/<name> is a symlink to each private directory of the run (see makePrivateDir). */
const PRIVATE_LINKS = 'private';

/** The name prefix of a run dir's private directories: a hash of its path, as many run dirs share one /tmp. */
export function privateDirPrefix(runDir: string): string {
  return `modeldock-${createHash('sha256').update(resolve(runDir)).digest('hex').slice(0, 12)}-`;
}

/**
 * A fresh directory (mode 0700, owned by `owner`) for the data of a process that runs as another
 * user: under the temp root (os.tmpdir(), else /tmp) instead of the run dir, because the checkout
 * may sit under a 0700 home or a path that user cannot traverse, and because a unix socket path
 * must fit 107 bytes however deep the checkout is. Linked from <run dir>/private/<name>;
 * removePrivateDirs removes it (at stop, or at the next start after a hard kill).
 */
export function makePrivateDir(runDir: string, name: string, owner: Owner): string {
  const root = [tmpdir(), '/tmp'].find((dir) => existsSync(dir) && traversableBy(dir, owner));
  if (root === undefined) throw new StackError(name, `neither ${tmpdir()} nor /tmp can be traversed by uid ${owner.uid}: set TMPDIR to a directory it can reach`);
  const dir = mkdtempSync(join(root, `${privateDirPrefix(runDir)}${name}-`));
  if (process.getuid?.() === 0) chownSync(dir, owner.uid, owner.gid);
  mkdirSync(join(runDir, PRIVATE_LINKS), { recursive: true });
  symlinkSync(dir, join(runDir, PRIVATE_LINKS, name));
  return dir;
}

/** Removes the run's private directories (only ones it made: the name prefix is checked) and their links. */
export function removePrivateDirs(runDir: string): void {
  const links = join(runDir, PRIVATE_LINKS);
  if (!existsSync(links)) return;
  for (const name of readdirSync(links)) {
    const link = join(links, name);
    let target = '';
    try {
      target = readlinkSync(link);
    } catch {
      /* not a link: just remove it */
    }
    if (basename(target).startsWith(privateDirPrefix(runDir))) rmSync(target, { recursive: true, force: true });
    rmSync(link, { recursive: true, force: true });
  }
}

/** True if `owner` may search every directory from / down to `path` (mode bits; ACLs are not consulted). */
export function traversableBy(path: string, owner: Owner): boolean {
  for (let dir = realpathSync(path); ; dir = dirname(dir)) {
    const st = statSync(dir);
    const bit = st.uid === owner.uid ? 0o100 : st.gid === owner.gid ? 0o010 : 0o001;
    if (owner.uid !== 0 && (st.mode & bit) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}
