// MOCK_EXIT_AFTER_S: a crash on a timer. After N seconds, write the termination message to the
// file the kubelet reads it from (the container's terminationMessagePath, shown as the last
// state's message in `kubectl describe pod`), then exit with the code. No drain: in-flight
// requests are cut, as in a real crash.
import { writeFileSync } from 'node:fs';
import type { Log } from './completions.ts';

export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** The kubelet reads no more than this of a container's termination message. */
export const TERMINATION_MESSAGE_MAX_BYTES = 4096;

export type PlannedExit = {
  afterMs: number;
  code: number;
  message: string;
  messagePath: string;
};

export type PlannedExitDeps = {
  writeFile: (path: string, text: string) => void;
  exit: (code: number) => void;
  log: Log;
};

const realDeps: PlannedExitDeps = {
  writeFile: (path, text) => writeFileSync(path, text),
  exit: (code) => process.exit(code),
  log: (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry })),
};

/** Writes the message (a failed write is logged, never fatal), then exits with the code. */
export function exitNow(plan: PlannedExit, deps: PlannedExitDeps = realDeps): void {
  try {
    deps.writeFile(plan.messagePath, plan.message);
  } catch (error) {
    deps.log({ msg: 'termination_message_failed', path: plan.messagePath, error: String(error) });
  }
  deps.log({ msg: 'planned_exit', code: plan.code, afterMs: plan.afterMs, message: plan.message });
  deps.exit(plan.code);
}

/** Calls exitNow after `plan.afterMs`; returns a function that cancels it. */
export function schedulePlannedExit(plan: PlannedExit, deps: PlannedExitDeps = realDeps): () => void {
  const timer = setTimeout(() => exitNow(plan, deps), plan.afterMs);
  return () => clearTimeout(timer);
}
