// CPU per request by process (from /proc): the Worker's processes, ps-http-sim, and this one.
import type { Api } from './api.ts';
import { closedLoop } from './load.ts';
import { cpuByCommand, cpuDelta } from './proc-stats.ts';
import { fmt } from './stats.ts';

/** CPU ms so far per process of interest: each Worker's tree, ps-http-sim, this process (client + baselines). */
export function cpuSnapshot(api: Api): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of cpuByCommand([api.worker.process.pid])) out.set(`wrangler dev: ${k}`, v);
  for (const [k, v] of cpuByCommand([api.direct.pid])) out.set(`no proxy: ${k}`, v);
  if (api.ledger.sim) for (const [k, v] of cpuByCommand([api.ledger.sim.pid])) out.set(k, v);
  const self = process.cpuUsage();
  out.set('bench process (client, baselines)', (self.user + self.system) / 1000);
  return out;
}

/** CPU ms per request by process over `n` runs of `op` at concurrency 8 (a pass of its own, one path at a time). */
export async function cpuPerRequest(api: Api, n: number, op: (i: number) => Promise<void>): Promise<Map<string, number>> {
  const before = cpuSnapshot(api);
  await closedLoop({ concurrency: 8, total: n, op });
  return new Map([...cpuDelta(before, cpuSnapshot(api))].map(([k, v]) => [k, v / n]));
}

/** One table cell: CPU ms per request by process, largest first (below 0.05 ms left out). */
export const cpuCell = (m: Map<string, number>): string =>
  [...m].filter(([, v]) => v >= 0.05).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${fmt(v)}`).join(', ');
