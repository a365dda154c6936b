// Placement across three real Kubernetes clusters (issue 33, acceptance A1 and A2; docs/multi-cluster.md
// step 6): c1–c3 are three kube-apiservers on one etcd, each with ModelDock installed as shipped and
// its own controller process (test/support/multicluster.ts). The Worker places each admission in its
// charging transaction; the ModelService then exists on that one cluster only, created by that
// cluster's controller, which also releases it.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAffinity } from '../../ledger/placement.ts';
import { LABELS } from '../../schema/model-service.ts';
import { MS_PATH, startFleet, type Fleet } from '../support/multicluster.ts';
import { waitFor } from '../support/wait.ts';

const TENANTS = ['mc-a', 'mc-b', 'mc-c'] as const;
const AFFINE = 'mc-aff';
/** Four ModelServices per cluster: the resource placement runs out of first. */
const CAPACITY = { cpu: 64_000, memory: 256 * 1024, 'nvidia.com/gpu': 0, modelservices: 4 };

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({ tenants: [...TENANTS, AFFINE], capacity: CAPACITY, leaseMs: 10_000, workerVars: { PLACEMENT_POLICY: 'affinity' } });
  await writeAffinity(fleet.ledger.db, AFFINE, ['c1', 'c2', 'c3']);
});
afterAll(async () => fleet?.stop());

const reservedOf = (cluster: string) => fleet.ledger.count('SELECT COALESCE(SUM(reserved_modelservices), 0) FROM cluster_allotment WHERE cluster = ?', [cluster]);

describe('placement across three real clusters', () => {
  it('A1: 10 admissions of 3 tenants each exist on exactly one cluster, no cluster holds more than its capacity, and each tenant is charged what its admissions hold', async () => {
    const byTenant = new Map<string, string[]>([['mc-a', []], ['mc-b', []], ['mc-c', []]]);
    const order = ['mc-a', 'mc-b', 'mc-c', 'mc-a', 'mc-b', 'mc-c', 'mc-a', 'mc-b', 'mc-c', 'mc-a'];
    await Promise.all(order.map(async (t) => byTenant.get(t)!.push(await fleet.admit(t))));
    const placed = new Map<string, string>();
    for (const [t, ids] of byTenant) for (const b of await fleet.untilState(t, ids, 'ready')) placed.set(b.id as string, b.cluster as string);
    expect(placed.size).toBe(10);

    const onCluster = new Map<string, Map<string, string>>();
    for (const m of fleet.members) onCluster.set(m.cluster.name, await fleet.modelServicesOn(m));
    for (const [id, cluster] of placed) {
      const where = fleet.members.filter((m) => onCluster.get(m.cluster.name)!.has(id)).map((m) => m.cluster.name);
      expect(where, `admission ${id} placed on ${cluster}`).toEqual([cluster]);
    }
    for (const m of fleet.members) {
      const count = [...placed.values()].filter((c) => c === m.cluster.name).length;
      expect(count).toBeLessThanOrEqual(CAPACITY.modelservices);
      expect(await reservedOf(m.cluster.name)).toBe(count);
    }
    for (const [t, ids] of byTenant) {
      // The tenant's charge is exactly its admissions': one ModelService each.
      expect(await fleet.ledger.count("SELECT COALESCE(SUM(used), 0) FROM tenant_quota WHERE tenant = ? AND resource = 'modelservices'", [t])).toBe(ids.length);
    }
    await fleet.untilConsistent();

    for (const [t, ids] of byTenant) await fleet.release(t, ids);
    await fleet.untilConsistent();
    for (const m of fleet.members) {
      expect(await reservedOf(m.cluster.name)).toBe(0);
      expect([...(await fleet.modelServicesOn(m)).keys()].filter((id) => placed.has(id))).toEqual([]);
    }
  });

  it('A2: with c1 full the next admission lands on c2, and a watch on c1 never sees an object of it', async () => {
    const [c1, c2] = fleet.members;
    const full: string[] = [];
    for (let i = 0; i < CAPACITY.modelservices; i++) full.push(await fleet.admit(AFFINE));
    const firsts = await fleet.untilState(AFFINE, full, 'ready');
    expect(firsts.map((b) => b.cluster)).toEqual(full.map(() => 'c1'));

    // Every ModelService event on c1 from now on (every namespace, as the informers watch).
    const seen: string[] = [];
    let ended: unknown = null;
    const kc = new KubeConfig();
    kc.loadFromFile(c1!.cluster.kubeconfig);
    const watch = await new Watch(kc).watch(
      MS_PATH,
      {},
      (type: string, obj: { metadata?: { labels?: Record<string, string> } }) => seen.push(`${type}:${obj.metadata?.labels?.[LABELS.admissionId] ?? '?'}`),
      (err: unknown) => (ended = err ?? 'ended'),
    );
    try {
      const next = await fleet.admit(AFFINE);
      const [placed] = await fleet.untilState(AFFINE, [next], 'ready');
      expect(placed!.cluster).toBe('c2');
      expect((await fleet.modelServicesOn(c2!)).has(next)).toBe(true);
      await fleet.release(AFFINE, [next]);
      // The control: the watch was open all along, and it does see c1's own admissions leave.
      await fleet.release(AFFINE, full);
      await waitFor("the watch to see c1's ModelServices deleted", async () => full.every((id) => seen.includes(`DELETED:${id}`)) || undefined);
      expect(ended, 'the watch on c1 ended early').toBeNull();
      expect(seen.filter((e) => e.endsWith(`:${next}`)), 'an event of the c2 admission on c1').toEqual([]);
    } finally {
      watch.abort();
    }
    await fleet.untilConsistent();
  });
});
