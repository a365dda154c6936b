// Exactly one ModelService across the clusters (issue 33, acceptance A6, without its failover rounds:
// moving a lost cluster's admissions is not built yet). Each round admits, waits a random 0–400 ms,
// SIGKILLs the controller of the cluster the admission was placed on — wherever it is in claiming,
// creating and acknowledging — and starts a new one, which waits out the dead one's Lease, takes the
// cluster over at a new epoch and finishes the delivery. Afterwards every admission has exactly one
// ModelService, on its cluster, none anywhere else, and the checker (a client per cluster) is clean.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/multicluster.ts';

const TENANT = 'eo-a';
/** 20 in the suite; MODELDOCK_A6_ROUNDS=100 runs the acceptance's 100 (about 2.5 min). */
const ROUNDS = Number(process.env.MODELDOCK_A6_ROUNDS ?? 20);
/** Longer than a controller's restart (its Lease of 4 s waited out): no round makes the cluster lost. */
const LEASE_MS = 15_000;
const CAPACITY = { cpu: 64_000, memory: 256 * 1024, 'nvidia.com/gpu': 0, modelservices: 40 };

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({ tenants: [TENANT], capacity: CAPACITY, leaseMs: LEASE_MS });
});
afterAll(async () => fleet?.stop());

describe('kill -9 of the routed cluster\'s controller around delivery', () => {
  it(`${ROUNDS} rounds: every admission ends with exactly one ModelService across the three clusters, and the ledger agrees`, async () => {
    const placed = new Map<string, string>();
    const waits: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const id = await fleet.admit(TENANT);
      const cluster = (await fleet.api(TENANT, `/requests/${id}`)).body.cluster as string;
      placed.set(id, cluster);
      const wait = Math.floor(Math.random() * 400);
      waits.push(wait);
      await sleep(wait);
      const m = fleet.member(cluster);
      process.kill(m.controller.proc.pid, 'SIGKILL');
      await fleet.startController(m);
    }
    console.log(`[measure] kill waits (ms): ${waits.join(' ')}; placed: ${[...placed.values()].join(' ')}`);
    await fleet.untilState(TENANT, [...placed.keys()], 'ready');
    const onCluster = new Map(await Promise.all(fleet.members.map(async (m) => [m.cluster.name, await fleet.modelServicesOn(m)] as const)));
    for (const [id, cluster] of placed) {
      const where = fleet.members.filter((m) => onCluster.get(m.cluster.name)!.has(id)).map((m) => m.cluster.name);
      expect(where, `admission ${id}, placed on ${cluster}`).toEqual([cluster]);
    }
    await fleet.untilConsistent();
    await fleet.release(TENANT, [...placed.keys()]);
    await fleet.untilConsistent();
  });
});
