// Polls a condition until it holds; the failure message carries the last observed value.
import { setTimeout as sleep } from 'node:timers/promises';

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    }
    await sleep(opts.intervalMs ?? 200);
  }
}
