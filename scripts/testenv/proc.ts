// Child processes of the local stack: spawned with their output in a known log file,
// waited for with a readiness probe, and stopped with SIGTERM then SIGKILL.
// A start that fails throws a StackError naming the component and the tail of its log.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
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
  const logFile = join(spec.logDir, `${spec.name}.log`);
  const fd = openSync(logFile, 'a');
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
  appendFileSync(pidFile(runDir), `${pid}\n`);

  const stop = async (): Promise<void> => {
    if (exited !== undefined) return;
    signalGroup(pid, 'SIGTERM');
    const killed = await Promise.race([exitedPromise.then(() => true), sleep(2000).then(() => false)]);
    if (!killed) {
      signalGroup(pid, 'SIGKILL');
      await exitedPromise;
    }
  };

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

/** Kills (synchronously) every process started for this run directory: leftovers of a hard-killed run, or all at exit. */
export function killLeftovers(runDir: string): void {
  const file = pidFile(runDir);
  if (!existsSync(file)) return;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const pid = Number(line);
    if (Number.isInteger(pid) && pid > 1) signalGroup(pid, 'SIGKILL');
  }
}
