// Closed-loop load: `concurrency` callers each run the next operation as soon as their last one
// finished, until `total` operations ran. Returns every operation's latency and the wall time.
// A failed operation fails the run (a benchmark of errors measures nothing).

export interface LoadResult {
  latenciesMs: number[];
  wallMs: number;
}

export async function closedLoop(opts: { concurrency: number; total: number; op: (i: number) => Promise<void> }): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const caller = async () => {
    for (;;) {
      const i = next++;
      if (i >= opts.total) return;
      const start = performance.now();
      await opts.op(i);
      latenciesMs.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.total) }, caller));
  return { latenciesMs, wallMs: performance.now() - t0 };
}
