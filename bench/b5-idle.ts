// B5 idle: after B3's largest round converged (its controller and objects are still up), watch a
// window in which nothing changes: mutating API calls other than Lease renewals must be 0, and
// relists 0 — counted by the API server itself (the audit log records every request of a
// ServiceAccount) — and the database statements per minute are reported (counted by a proxy in
// front of the controller's ledger database; this ledger has no open reservation, so they are the
// poller's and the resync's idle cost; B8 measures the resync at scale). The window is shortened
// from the issue's 10 minutes to one ledger resync period (LEDGER_RESYNC_MS, 60 s) in a full run,
// 10 s in a quick one (the whole suite must fit 15 min). B8 runs meanwhile (run.ts `alongside`):
// it has its own ledger and Worker and no Kubernetes, so nothing it does is counted here.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AUDIT_LOG } from '../scripts/testenv/kube.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { untilWritesSettle } from './lib/kube.ts';
import { fmt } from './lib/stats.ts';

interface AuditEvent {
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string };
}

function readFrom(file: string, offset: number): string {
  const size = statSync(file).size;
  const buf = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, offset);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

export const b5: Benchmark = {
  id: 'B5',
  title: 'idle after convergence',
  keepsState: true, // B3's objects stay up for B6
  async run(ctx) {
    const c = ctx.shared.converged;
    if (!c) throw new Error('B5 needs B3 to have run first (its converged objects)');
    const windowMs = ctx.quick ? 10_000 : 60_000;
    const audit = join(ctx.stack.logDir, AUDIT_LOG);
    // "After convergence" means after the controller's trailing work (Events on their own budget).
    const settledS = await untilWritesSettle(() => c.controller.metrics(), 240_000);
    const offset = statSync(audit).size;
    const stmts0 = c.statements.length;
    await sleep(windowMs);
    const user = `system:serviceaccount:${c.namespace}:modeldock-controller`;
    const events = readFrom(audit, offset)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.user?.username === user);
    const mutating = events.filter((e) => ['create', 'update', 'patch', 'delete'].includes(e.verb ?? '') && e.objectRef?.resource !== 'leases');
    const leaseWrites = events.filter((e) => e.verb === 'update' && e.objectRef?.resource === 'leases').length;
    const relists = events.filter((e) => e.verb === 'list').length;
    const minutes = windowMs / 60_000;
    const window = c.statements.slice(stmts0);
    const byKind = new Map<string, number>();
    for (const s of window) byKind.set(s.toUpperCase(), (byKind.get(s.toUpperCase()) ?? 0) + 1);
    const kinds = [...byKind].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${fmt(v / minutes)}`).join(', ');
    const byResource = new Map<string, number>();
    for (const e of mutating) byResource.set(`${e.verb} ${e.objectRef?.resource}`, (byResource.get(`${e.verb} ${e.objectRef?.resource}`) ?? 0) + 1);
    const ok = mutating.length === 0 && relists === 0;
    return {
      summary: `ratio=${mutating.length + relists} (mutating calls + relists in ${fmt(windowMs / 1000)} s idle with ${c.n} ModelServices; goal 0: ${ok ? 'ok' : 'MISS'}) mutating ${mutating.length}, relists ${relists}, lease renewals ${leaseWrites}, ${fmt(window.length / minutes)} DB statements/min`,
      details: [
        `Window ${fmt(windowMs / 1000)} s (shortened from 10 min to one ledger resync period; B8, when the run includes it, runs meanwhile on its own ledger, without Kubernetes), ${c.n} converged ModelServices (with their Deployments, Services and pods), counted in the API server's audit log for ${user}. The window started once the controller's writes had stopped for 6 s: ${fmt(settledS)} s after B3's convergence (trailing Events on their own budget).`,
        '',
        `- mutating calls other than Lease renewals: ${mutating.length}${byResource.size ? ` (${[...byResource].map(([k, v]) => `${k} ×${v}`).join(', ')})` : ''}`,
        `- relists (list requests): ${relists}`,
        `- Lease renewals: ${leaseWrites}`,
        `- database statements per minute: ${fmt(window.length / minutes)}${kinds ? ` (${kinds})` : ''}`,
      ],
    };
  },
};
