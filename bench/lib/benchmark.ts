// What every benchmark script (bench/bN-*.ts) exports and bench/run.ts runs.
import type { BenchContext } from './context.ts';
import type { BenchResult } from './results.ts';

/** One performance goal: measured against a baseline run in the same process, summarised as `ratio=…`. */
export interface Benchmark {
  id: string;
  title: string;
  /** Its processes and objects stay up for the benchmarks after it (ctx.shared), cleaned up at the end. */
  keepsState?: boolean;
  /** false: runs without the local stack (B7). */
  stack?: false;
  /**
   * Runs only when `--only` names it, and alone: on a stack started with these options (B6L's
   * kube-controller-manager client QPS would change what the others compare with; B10 needs the
   * real node, which the others do without; B12 three clusters).
   */
  alone?: { kcmArgs?: string[]; realNode?: boolean; clusters?: number };
  /**
   * Runs at the same time as the benchmark with this id when both are selected (its own result
   * line): B8 touches neither the cluster nor B3's controller, whose idle window B5 counts.
   */
  alongside?: string;
  run(ctx: BenchContext): Promise<Omit<BenchResult, 'id' | 'title' | 'seconds'>>;
}
