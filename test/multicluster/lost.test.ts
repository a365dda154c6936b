// A cluster whose controller stops sending heartbeats, on three real clusters (issue 33: acceptance
// A5, and the `lost` half of A3; docs/multi-cluster.md T6). The other clusters' controllers supervise
// it: a pause shorter than the lease changes nothing; past the lease it is marked lost (new epoch,
// audited, no new placement there), the paused controller exits when it resumes, a new one takes the
// cluster over while it stays lost, and the operator's `ready` opens it again. Moving a lost
// cluster's admissions elsewhere (the rest of A3) is failover.test.ts.
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAudit, readCluster } from '../../ledger/cluster-store.ts';
import { changeClusterState } from '../../scripts/operator/cluster-admin.ts';
import { startFleet, type Fleet } from '../support/multicluster.ts';
import { waitFor } from '../support/wait.ts';

const TENANT = 'lo-a';
/** The clusters' lease: a heartbeat every 3 s (a 2 s pause leaves 4 s to spare). */
const LEASE_MS = 9_000;
const CAPACITY = { cpu: 64_000, memory: 256 * 1024, 'nvidia.com/gpu': 0, modelservices: 8 };

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({ tenants: [TENANT], capacity: CAPACITY, leaseMs: LEASE_MS });
});
afterAll(async () => fleet?.stop());

const cluster = async (name: string) => (await readCluster(fleet.ledger.db, name))!;
/** The cluster's `lost` audit rows after `afterSeq` (the tests run in any order: another may have made one before). */
const lostAudits = async (name: string, afterSeq = 0) => (await readAudit(fleet.ledger.db, name, 100)).filter((a) => a.action === 'lost' && a.seq > afterSeq);
const lastAuditSeq = async (name: string) => Math.max(0, ...(await readAudit(fleet.ledger.db, name, 100)).map((a) => a.seq));

describe('a cluster whose controller stops', () => {
  it('A5: a controller paused for less than the lease changes nothing', async () => {
    const c3 = fleet.member('c3');
    const before = await cluster('c3');
    const auditSeq = await lastAuditSeq('c3');
    // A heartbeat missed, well within the lease (and within its Lease's renew deadline). The pause is
    // held by a process of its own: a busy test process must not stretch it (seen: 14 s, not 2).
    const pid = c3.controller.proc.pid;
    await promisify(execFile)('sh', ['-c', `kill -STOP ${pid}; sleep 2; kill -CONT ${pid}`]);
    await sleep(LEASE_MS + 2_000); // what a false failover would have needed, and more
    expect(await cluster('c3')).toMatchObject({ state: 'ready', epoch: before.epoch, version: before.version });
    expect(await lostAudits('c3', auditSeq)).toEqual([]);
    expect(c3.controller.alive()).toBe(true);
  });

  it('stopped past the lease: lost within the lease + 5 s by another cluster\'s controller, placed around, the stopped one exits; back, it stays lost until the operator\'s ready', async () => {
    const c3 = fleet.member('c3');
    const seen = await cluster('c3');
    const auditSeq = await lastAuditSeq('c3');
    const stopped = c3.controller;
    process.kill(stopped.proc.pid, 'SIGSTOP');
    try {
      await waitFor('c3 to be marked lost', async () => ((await cluster('c3')).state === 'lost' ? true : undefined), { timeoutMs: LEASE_MS + 5_000, intervalMs: 200 });
      expect(await cluster('c3')).toMatchObject({ state: 'lost', epoch: seen.epoch + 1 });
      const [audit, ...more] = await lostAudits('c3', auditSeq);
      expect(more).toEqual([]);
      expect(audit?.actor).toMatch(/^c[12]-ctl-\d+_/); // one of the other clusters' controllers

      // No new placement on a lost cluster.
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push(await fleet.admit(TENANT));
      const placed = await fleet.untilState(TENANT, ids, 'ready');
      expect(placed.map((b) => b.cluster).filter((c) => c === 'c3')).toEqual([]);
      await fleet.release(TENANT, ids);
    } finally {
      process.kill(stopped.proc.pid, 'SIGCONT');
    }
    // Resumed, its heartbeat finds the epoch moved on (or its Lease gone): it exits.
    await waitFor('the resumed controller to exit', async () => (!stopped.alive() ? true : undefined), { timeoutMs: 20_000 });

    // Its restart takes the cluster over again: a new epoch, still lost.
    await fleet.startController(c3);
    await fleet.untilTakenOver(c3, 'lost');
    expect((await cluster('c3')).epoch).toBe(seen.epoch + 2);
    // The operator's ready: its controller is back (fresh heartbeat), nothing stranded. The same
    // controller carries on at its epoch; its heartbeat keeps the cluster ready.
    const ctx = { db: fleet.ledger.db, actor: 'ops-mc', now: () => new Date() };
    expect(await changeClusterState(ctx, { name: 'c3', action: 'ready', reason: 'controller back' })).toMatchObject({ changed: true, from: 'lost', cluster: { state: 'ready', epoch: seen.epoch + 2 } });
    await sleep(LEASE_MS + 2_000);
    expect(await cluster('c3')).toMatchObject({ state: 'ready', epoch: seen.epoch + 2 });
    expect(c3.controller.alive()).toBe(true);
    await fleet.untilTakenOver(c3, 'ready');
    await fleet.untilConsistent();
  });
});
