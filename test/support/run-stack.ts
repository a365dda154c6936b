// The life of a stack in a vitest global setup: whatever ends the process takes the stack (and
// anything tests spawned into it, registered under its run dir) along; a failing `ready` step
// stops it again; the returned teardown stops it for good.
import { killLeftovers } from '../../scripts/testenv/proc.ts';

export async function runStack<S extends { stop(): Promise<void> }>(
  runDir: string,
  start: () => Promise<S>,
  ready: (stack: S) => Promise<void>,
): Promise<() => Promise<void>> {
  const stack = await start();
  const killAll = () => killLeftovers(runDir);
  process.once('exit', killAll);
  const teardown = async () => {
    await stack.stop();
    killAll();
    process.removeListener('exit', killAll);
  };
  try {
    await ready(stack);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
