// The life of a stack in a vitest global setup: whatever ends the process takes the stack (and
// anything tests spawned into it, registered under its run dir) along — from the moment its start
// begins, not once it is up; a failing start or `ready` step leaves nothing running; the returned
// teardown stops it for good.
import { killLeftovers, removePrivateDirs, stopLeftovers } from '../../scripts/testenv/proc.ts';

export async function runStack<S extends { stop(): Promise<void> }>(
  runDir: string,
  start: () => Promise<S>,
  ready: (stack: S) => Promise<void>,
): Promise<() => Promise<void>> {
  // Synchronous: an 'exit' listener cannot await.
  const killAll = () => {
    killLeftovers(runDir);
    removePrivateDirs(runDir);
  };
  process.once('exit', killAll);
  const forget = async () => {
    await stopLeftovers(runDir);
    removePrivateDirs(runDir);
    process.removeListener('exit', killAll);
  };
  let stack: S;
  try {
    stack = await start();
  } catch (err) {
    await forget(); // the start cleans up after itself; this is the net under it
    throw err;
  }
  const teardown = async () => {
    try {
      await stack.stop();
    } finally {
      await forget();
    }
  };
  try {
    await ready(stack);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
