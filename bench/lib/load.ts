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

/**
 * Several paths measured in alternation: `rounds` rounds, each running every path for
 * total/rounds operations in turn, so a change of the machine's load during the run (2 shared
 * cores) falls on every path alike. Latencies are pooled; wall time is the sum of a path's rounds.
 */
export async function interleaved<K extends string>(
  paths: Record<K, (i: number) => Promise<void>>,
  opts: { concurrency: number; total: number; rounds: number },
): Promise<Record<K, LoadResult>> {
  const out = {} as Record<K, LoadResult>;
  const per = Math.max(1, Math.floor(opts.total / opts.rounds));
  for (let r = 0; r < opts.rounds; r++) {
    for (const [name, op] of Object.entries(paths) as Array<[K, (i: number) => Promise<void>]>) {
      const res = await closedLoop({ concurrency: opts.concurrency, total: per, op: (i) => op(r * per + i) });
      const acc = (out[name] ??= { latenciesMs: [], wallMs: 0 });
      acc.latenciesMs.push(...res.latenciesMs);
      acc.wallMs += res.wallMs;
    }
  }
  return out;
}
