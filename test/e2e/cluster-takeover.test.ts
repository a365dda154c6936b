// A registered cluster and the controller started for it (CLUSTER=<name>), as real processes on the
// stack: while the cluster is joining no admission is placed; the leader's takeover makes it ready
// and admissions land on it; its heartbeat keeps moving on the database's clock; a takeover by
// someone else supersedes the leader, which exits, and the standby takes the cluster over with a
// new epoch and carries on (docs/multi-cluster.md step 5, the takeover and the heartbeat).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireClusterEpoch } from '../../ledger/cluster-epoch.ts';
import { readAudit, readCluster } from '../../ledger/cluster-store.ts';
import { parsePrometheus } from '../../schema/prom-text.ts';
import { addCluster } from '../../scripts/operator/cluster-admin.ts';
import { isLeading } from '../support/controller-process.ts';
import { startSystem, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

const CLUSTER = 'e2e-c1';
let sys: System;
beforeAll(async () => {
  sys = await startSystem();
  // A lease of 3 s: a heartbeat every second.
  await addCluster({ db: sys.ledger.db, actor: 'ops-e2e', now: () => new Date() }, { name: CLUSTER, capacity: { cpu: 4_000, memory: 8_192, 'nvidia.com/gpu': 0, modelservices: 4 }, leaseMs: 3_000 });
});
afterAll(async () => sys?.stop());

const cluster = async () => (await readCluster(sys.ledger.db, CLUSTER))!;
const epochMetric = async (port: () => Promise<string>) =>
  parsePrometheus(await port()).find((s) => s.name === 'modeldock_cluster_epoch' && s.labels.cluster === CLUSTER)?.value;

describe('a cluster and its controller', () => {
  it('joining places nothing; the takeover makes it ready and places there; a superseded leader exits and the standby takes over', async () => {
    const body = { name: 'early', image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } };
    const early = await sys.api('/requests', { method: 'POST', body, idempotencyKey: 'takeover-early' });
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    expect(early.body.error?.code).toBe('no_cluster_capacity');
    expect(await sys.ledger.count("SELECT COUNT(*) FROM quota_movement WHERE direction = 'charge'")).toBe(0);

    const a = await sys.startController('ctl-a', { CLUSTER });
    await waitFor('ctl-a to lead', () => isLeading(a));
    const taken = await waitFor('ctl-a to take the cluster over', async () => ((await cluster()).state === 'ready' ? cluster() : undefined));
    expect(taken).toMatchObject({ epoch: 1, version: 2 });
    expect(taken.heartbeatBy).toMatch(/^ctl-a_/);
    // The gauge is set once the takeover returned (after the shards followed): wait for it, then it must say 1.
    expect(await waitFor('ctl-a to report its epoch', () => epochMetric(a.metrics))).toBe(1);
    await waitFor('a later heartbeat', async () => ((await cluster()).heartbeatAt !== taken.heartbeatAt ? true : undefined), { timeoutMs: 5_000 });

    const [id] = await sys.admit(1);
    const [ready] = await sys.untilState([id!], 'ready');
    expect(ready!.cluster).toBe(CLUSTER);

    const b = await sys.startController('ctl-b', { CLUSTER });
    expect(await isLeading(b)).toBe(false);
    // Another takeover of the cluster (what a controller started for it elsewhere, or the operator's `ready` of a lost one, does).
    expect(await acquireClusterEpoch(sys.ledger.db, { cluster: CLUSTER, holder: 'elsewhere', now: new Date() })).toMatchObject({ kind: 'taken', epoch: 2, state: 'ready' });
    await waitFor('ctl-a to exit, superseded', async () => !a.alive(), { timeoutMs: 15_000 });
    expect(readFileSync(a.proc.logFile, 'utf8')).toContain('exiting: cluster epoch superseded');
    await waitFor('ctl-b to lead', () => isLeading(b), { timeoutMs: 30_000 });
    const again = await waitFor('ctl-b to take the cluster over', async () => {
      const c = await cluster();
      return c.heartbeatBy?.startsWith('ctl-b_') ? c : undefined;
    });
    expect(again).toMatchObject({ state: 'ready', epoch: 3 });
    expect(await waitFor('ctl-b to report its epoch', async () => ((await epochMetric(b.metrics)) === 3 ? 3 : undefined))).toBe(3);

    // The new leader serves the admission: deleted, released, its room on the cluster given back.
    expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await sys.untilState([id!], 'released');
    await sys.untilSettled();
    expect((await readAudit(sys.ledger.db, CLUSTER)).map((e) => e.action)).toEqual(['joined', 'add']);
  });
});
