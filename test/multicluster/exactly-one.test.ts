// Exactly one ModelService across the clusters (issue 33, acceptance A6). Each round admits, waits a
// random 0–400 ms, SIGKILLs the controller of the cluster the admission was placed on — wherever it is
// in claiming, creating and acknowledging — and starts a new one, which waits out the dead one's Lease,
// takes the cluster over at a new epoch and finishes the delivery. Every tenth round holds that
// controller down past the cluster's lease instead: the cluster is marked lost and its running
// admissions move (docs/multi-cluster.md T7), the one just admitted included, wherever it was in its
// delivery; the new controller then deletes what was left there and frees the stranded room (T8, T9),
// and the operator opens the cluster again. Afterwards every admission has exactly one ModelService,
// on the cluster the ledger places it on, none anywhere else, and the checker (a client per cluster)
// is clean.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerAnchors } from '../../ledger/anchors.ts';
import { readAllAllotments, readCluster } from '../../ledger/cluster-store.ts';
import { changeClusterState } from '../../scripts/operator/cluster-admin.ts';
import { startFleet, type Fleet } from '../support/multicluster.ts';
import { waitFor } from '../support/wait.ts';

const TENANT = 'eo-a';
/** 20 in the suite (about 3.5 min); MODELDOCK_A6_ROUNDS=100 runs the acceptance's 100 (about 15 min). */
const ROUNDS = Number(process.env.MODELDOCK_A6_ROUNDS ?? 20);
/** A round takes about 9 s (a failover round about 40 s). */
const TEST_TIMEOUT_MS = 120_000 + ROUNDS * 12_000;
/** Longer than a controller's restart (its Lease of 4 s waited out): only the rounds that hold a controller down make the cluster lost. */
const LEASE_MS = 15_000;
/** Every FAILOVER_EVERY-th round holds the controller down past the lease. */
const FAILOVER_EVERY = 10;
/** Room for every admission on two clusters: a failover round moves a third of them onto the other two. */
const CAPACITY = { cpu: 64_000, memory: 256 * 1024, 'nvidia.com/gpu': 0, modelservices: Math.max(40, Math.ceil(ROUNDS / 2) + 10) };

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({ tenants: [TENANT], capacity: CAPACITY, leaseMs: LEASE_MS });
});
afterAll(async () => fleet?.stop());

describe('kill -9 of the routed cluster\'s controller around delivery', () => {
  it(`${ROUNDS} rounds (every ${FAILOVER_EVERY}th a failover): every admission ends with exactly one ModelService across the three clusters, and the ledger agrees`, async () => {
    const ids: string[] = [];
    const waits: number[] = [];
    const killed: string[] = [];
    const ctx = { db: fleet.ledger.db, actor: 'ops-a6', now: () => new Date() };
    for (let round = 1; round <= ROUNDS; round++) {
      const id = await fleet.admit(TENANT);
      ids.push(id);
      const cluster = (await fleet.api(TENANT, `/requests/${id}`)).body.cluster as string;
      const wait = Math.floor(Math.random() * 400);
      waits.push(wait);
      await sleep(wait);
      const m = fleet.member(cluster);
      process.kill(m.controller.proc.pid, 'SIGKILL');
      killed.push(cluster);
      if (round % FAILOVER_EVERY !== 0) {
        await fleet.startController(m);
        await fleet.untilTakenOver(m, null);
        continue;
      }
      // Held down past the lease: lost, and what ran there moves.
      await waitFor(`${cluster} to be marked lost`, async () => ((await readCluster(fleet.ledger.db, cluster))?.state === 'lost' ? true : undefined), { timeoutMs: LEASE_MS + 10_000, intervalMs: 200 });
      await fleet.startController(m);
      await fleet.untilTakenOver(m, 'lost');
      // Back, its controller deletes the leftovers and frees their room; then the operator opens it again.
      const anchors = await ledgerAnchors(fleet.ledger.db);
      await waitFor(`nothing of ${cluster}'s admissions left stranded there`, async () => {
        const rows = await readAllAllotments(fleet.ledger.db, anchors, cluster);
        return rows.every((a) => a.stranded.modelservices === 0 && a.reserved.modelservices === 0) ? true : undefined;
      }, { timeoutMs: 60_000 });
      expect(await changeClusterState(ctx, { name: cluster, action: 'ready', reason: 'A6 failover round' })).toMatchObject({ changed: true, from: 'lost' });
    }
    console.log(`[measure] kill waits (ms): ${waits.join(' ')}; killed: ${killed.join(' ')}`);
    await fleet.untilState(TENANT, ids, 'ready');
    // Where the ledger places each admission now, and every cluster's ModelServices: exactly one, there.
    await waitFor('every admission to have exactly one ModelService, on the cluster the ledger places it on', async () => {
      const onCluster = new Map(await Promise.all(fleet.members.map(async (m) => [m.cluster.name, await fleet.modelServicesOn(m)] as const)));
      for (const id of ids) {
        const cluster = (await fleet.api(TENANT, `/requests/${id}`)).body.cluster as string;
        const where = fleet.members.filter((m) => onCluster.get(m.cluster.name)!.has(id)).map((m) => m.cluster.name);
        if (where.length !== 1 || where[0] !== cluster) throw new Error(`admission ${id}, placed on ${cluster}, has ModelServices on [${where.join(', ')}]`);
      }
      return true;
    }, { timeoutMs: 60_000 });
    const moves = await fleet.ledger.db.execute("SELECT COUNT(*) AS n FROM quota_movement WHERE tenant = ? AND direction = 'move'", [TENANT]);
    console.log(`[measure] failover moves: ${Number(moves.rows[0]?.n)}`);
    if (ROUNDS >= FAILOVER_EVERY) expect(Number(moves.rows[0]?.n)).toBeGreaterThan(0);
    await fleet.untilConsistent();
    await fleet.release(TENANT, ids);
    await fleet.untilConsistent();
  }, TEST_TIMEOUT_MS);
});
