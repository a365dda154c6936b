import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { exitNow, schedulePlannedExit, type PlannedExit, type PlannedExitDeps } from './planned-exit.ts';

const plan: PlannedExit = { afterMs: 30_000, code: 3, message: 'weights corrupt', messagePath: '/dev/termination-log' };

/** Fakes that record what happened, in order. */
function fakes(writeFile: PlannedExitDeps['writeFile'] = () => {}) {
  const steps: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const deps: PlannedExitDeps = {
    writeFile: (path, text) => {
      writeFile(path, text);
      steps.push(`write ${path} ${text}`);
    },
    exit: (code) => void steps.push(`exit ${code}`),
    log: (entry) => void logs.push(entry),
  };
  return { steps, logs, deps };
}

describe('exitNow', () => {
  test('writes the message to the termination path, then exits with the code', () => {
    const f = fakes();
    exitNow(plan, f.deps);
    expect(f.steps).toEqual(['write /dev/termination-log weights corrupt', 'exit 3']);
    expect(f.logs).toEqual([{ msg: 'planned_exit', code: 3, afterMs: 30_000, message: 'weights corrupt' }]);
  });

  test('a failed write is logged, and the process still exits with the code', () => {
    const f = fakes(() => {
      throw new Error("EACCES: permission denied, open '/dev/termination-log'");
    });
    exitNow(plan, f.deps);
    expect(f.steps).toEqual(['exit 3']);
    expect(f.logs[0]).toEqual({
      msg: 'termination_message_failed',
      path: '/dev/termination-log',
      error: "Error: EACCES: permission denied, open '/dev/termination-log'",
    });
  });
});

describe('schedulePlannedExit', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  test('exits after afterMs, not before', () => {
    const f = fakes();
    schedulePlannedExit(plan, f.deps);
    vi.advanceTimersByTime(29_999);
    expect(f.steps).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(f.steps).toEqual(['write /dev/termination-log weights corrupt', 'exit 3']);
  });

  test('cancelled: never exits', () => {
    const f = fakes();
    const cancel = schedulePlannedExit(plan, f.deps);
    cancel();
    vi.advanceTimersByTime(60_000);
    expect(f.steps).toEqual([]);
  });
});
