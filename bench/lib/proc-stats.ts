// CPU time and memory of local processes, from /proc (Linux): a process and all its
// descendants, grouped by command name, so a benchmark can say which process spent the time.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuMs: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');
    // fields after comm: state(0) ppid(1) … utime(11) stime(12)
    return { pid, ppid: Number(f[1]), comm, cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

function allStats(): ProcStat[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readStat(Number(d)))
    .filter((s): s is ProcStat => s !== undefined);
}

/** `pid` and every descendant. */
export function processTree(pid: number, stats: ProcStat[] = allStats()): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  for (const s of stats) byParent.set(s.ppid, [...(byParent.get(s.ppid) ?? []), s]);
  const out: ProcStat[] = [];
  const walk = (p: number) => {
    const self = stats.find((s) => s.pid === p);
    if (self) out.push(self);
    for (const c of byParent.get(p) ?? []) walk(c.pid);
  };
  walk(pid);
  return out;
}

/** CPU milliseconds (user + system) so far of each process tree, summed per command name. */
export function cpuByCommand(pids: readonly number[]): Map<string, number> {
  const stats = allStats();
  const out = new Map<string, number>();
  for (const pid of pids) for (const s of processTree(pid, stats)) out.set(s.comm, (out.get(s.comm) ?? 0) + s.cpuMs);
  return out;
}

/** The difference of two cpuByCommand snapshots. */
export function cpuDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

/** VmRSS and its parts (RssAnon: heap, malloc, stacks; RssFile: mapped code such as the node binary) in MiB. */
export function rssParts(pid: number | 'self'): { rss: number; anon: number; file: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) / 1024;
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
  } catch {
    return undefined;
  }
}

/** Resident set size of one process in MiB (VmRSS), undefined when it is gone. */
export const rssMiB = (pid: number): number | undefined => rssParts(pid)?.rss;

/** Command line arguments of a process. */
export function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}
