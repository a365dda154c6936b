// B12 several clusters on 2 cores (issue 33, "keep it within 2 cores"; docs/multi-cluster.md "Local
// stack"): the stack with three Kubernetes clusters on one etcd, left idle after its start, and the
// CPU each of its control-plane parts spends in a window, read from /proc/<pid>/stat (user + system
// ticks) of every process the stack started. Baseline in the same run: the first cluster's part
// (etcd, its kube-apiserver, kube-controller-manager, kube-scheduler and KWOK), which is the whole
// single-cluster stack. Goal: the three clusters together idle at ≤ 0.5 core. MariaDB and
// ps-http-sim are left out (the same with one cluster or three), and no controller runs.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { liveRecordedPids } from '../scripts/testenv/proc.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { fmt } from './lib/stats.ts';
import { partOf } from './lib/stack-parts.ts';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const TICKS_PER_S = 100;
const GOAL_CORES = 0.5;

/** User + system CPU ticks of a live process (undefined: it is gone). */
function ticks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  } catch {
    return undefined;
  }
}

function cmdlineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

export const b12: Benchmark = {
  id: 'B12',
  title: 'three clusters idle on 2 cores',
  alone: { clusters: 3 },
  async run(ctx) {
    const { runDir } = ctx.stack;
    const settleMs = ctx.quick ? 5_000 : 30_000;
    const windowMs = ctx.quick ? 10_000 : 60_000;
    await sleep(settleMs); // what follows a start (informers' lists, the first leases) is not idle
    const parts = new Map<number, string>();
    for (const pid of liveRecordedPids(runDir)) {
      const part = partOf(cmdlineOf(pid), runDir);
      if (part) parts.set(pid, part);
    }
    const before = new Map([...parts.keys()].map((pid) => [pid, ticks(pid)]));
    await sleep(windowMs);
    const cores = new Map<string, number>();
    for (const [pid, part] of parts) {
      const t0 = before.get(pid);
      const t1 = ticks(pid);
      if (t0 === undefined || t1 === undefined) throw new Error(`a ${part} process (${pid}) exited during the window`);
      cores.set(part, (cores.get(part) ?? 0) + (t1 - t0) / TICKS_PER_S / (windowMs / 1000));
    }
    const total = [...cores.values()].reduce((a, b) => a + b, 0);
    const first = (cores.get('etcd') ?? 0) + (cores.get('c1') ?? 0);
    const ok = total <= GOAL_CORES;
    const per = [...cores].sort(([a], [b]) => a.localeCompare(b)).map(([p, c]) => `${p} ${fmt(c)}`).join(', ');
    return {
      summary: `ratio=${fmt(total / first)} (three clusters idle ${fmt(total)} cores vs the first cluster with etcd ${fmt(first)}; goal ≤ ${GOAL_CORES} core in all: ${ok ? 'ok' : 'MISS'}) ${per}`,
      details: [
        `${parts.size} processes (etcd and, per cluster, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK), no controller, window ${fmt(windowMs / 1000)} s after ${fmt(settleMs / 1000)} s of settling; CPU time from /proc/<pid>/stat (user + system).`,
        `- per part, in cores: ${per}`,
      ],
    };
  },
};
