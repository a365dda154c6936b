// A hostile tenant, end to end (Worker in workerd, controller process, real cluster): nothing runs
// for free, the count quota holds, and what the image policy refuses at delivery becomes a
// conflict the tenant can still delete and be released from. Every step is checked against
// GET /quota, the pods the cluster really runs, and checkLedger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import type { Pod } from '../../controller/modelservice/types.ts';
import { LABELS, REPLICA_RESOURCES, RESOURCE_UNITS } from '../../schema/model-service.ts';
import { startSystem, type System } from '../support/system.ts';

let sys: System;
beforeAll(async () => {
  // 1 CPU and 1 GiB, as in the report; at most 3 ModelServices. The Worker runs with the shipped
  // wrangler.toml defaults (250m / 256Mi per replica).
  sys = await startSystem({ quota: ['cpu=1', 'memory=1Gi', 'modelservices=3'] });
  // The controller's copy of the image policy is stricter than the Worker's (`*` in the tests: any).
  await sys.startController('ctl-hostile', { ALLOWED_IMAGE_REGISTRIES: 'ghcr.io/acme' });
});
afterAll(async () => sys?.stop());

type Usage = Record<string, { hard: number; reserved: number; active: number }>;
const quota = async (): Promise<Usage> => (await sys.api('/quota')).body.resources as Usage;
type PodWithResources = Omit<Pod, 'spec'> & {
  spec: { containers: Array<{ resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }> };
};
const pods = async (id: string) =>
  (await sys.kube.list<PodWithResources>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` })).items;
const allPods = async () => (await sys.kube.list<PodWithResources>(paths.pods(sys.tenantNamespace), { labelSelector: LABELS.admissionId })).items;
const podNames = async () => (await allPods()).map((p) => p.metadata.name).sort();
// The tests share the one tenant (and its quota of 1 CPU, 1 GiB, 3 ModelServices) in any order:
// each reads the quota as it finds it and asserts what it changed.

describe('a hostile tenant gets nothing for free', () => {
  it('the reported request (16 replicas, no resources) is charged the defaults and refused by the quota; nothing runs', async () => {
    const cpu = (await quota()).cpu!;
    const available = cpu.hard - cpu.reserved;
    const running = await podNames();
    for (let i = 1; i <= 3; i++) {
      const r = await sys.api('/requests', { method: 'POST', body: { name: `free${i}`, image: 'ghcr.io/x/miner:1', replicas: 16 }, idempotencyKey: `free-${i}` });
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(r.body.error?.code).toBe('quota_exceeded');
      expect(r.body.error?.message).toContain(`cpu short by ${4000 - available} (requested 4000, available ${available})`);
    }
    expect(await podNames()).toEqual(running);
    expect((await quota()).cpu).toMatchObject({ hard: 1000, reserved: cpu.reserved });
    expect(await sys.check()).toEqual([]);
  });

  it('a request without resources within quota is charged the defaults, and its pods run with exactly that as requests = limits', async () => {
    const counted = (await quota()).modelservices!.reserved;
    const r = await sys.api('/requests', { method: 'POST', body: { name: 'small', image: 'ghcr.io/acme/model:1', replicas: 2 }, idempotencyKey: 'small' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.id as string;
    expect(r.body.amounts).toEqual({ cpu: 500, memory: 512, 'nvidia.com/gpu': 0, modelservices: 1 });
    expect((r.body.spec as { resources: unknown }).resources).toEqual({ cpu: '250m', memory: '256Mi' });
    await sys.untilState([id], 'ready');
    const running = await pods(id);
    expect(running).toHaveLength(2);
    // GET /quota accounts for everything that runs: Σ pod requests = reserved, per resource.
    const q = await quota();
    const everyPod = await allPods();
    expect(everyPod.length).toBeGreaterThanOrEqual(running.length); // else every sum below is a vacuous 0
    for (const res of REPLICA_RESOURCES) {
      const sum = everyPod.reduce((acc, p) => {
        const c = p.spec.containers[0]?.resources;
        expect(c?.limits).toEqual(c?.requests);
        const v = c?.requests?.[res];
        return acc + (v ? RESOURCE_UNITS[res].parse(v) : 0);
      }, 0);
      expect(sum, res).toBe(q[res]?.reserved ?? 0);
    }
    expect(q.modelservices).toMatchObject({ hard: 3, reserved: counted + 1 });
    expect(await sys.check()).toEqual([]);
  });

  it('the count quota: replicas 0 still costs one ModelService; the fourth is refused; a release gives the count back once', async () => {
    const { hard, reserved } = (await quota()).modelservices!;
    expect(hard).toBe(3);
    expect(reserved, 'a ModelService of this tenant left for this test to add').toBeLessThan(hard);
    // Replicas 0 up to the limit: each is admitted and counted.
    const ids: string[] = [];
    for (let i = reserved; i < hard; i++) {
      const zero = await sys.api('/requests', { method: 'POST', body: { name: `zero${i}`, image: 'ghcr.io/acme/model:1', replicas: 0 }, idempotencyKey: `zero-${i}` });
      expect(zero.status, JSON.stringify(zero.body)).toBe(201);
      expect(zero.body.amounts).toMatchObject({ cpu: 0, memory: 0, modelservices: 1 });
      ids.push(zero.body.id as string);
    }
    const fourth = await sys.api('/requests', { method: 'POST', body: { name: 'fourth', image: 'ghcr.io/acme/model:1', replicas: 0 }, idempotencyKey: 'fourth' });
    expect(fourth.status).toBe(409);
    expect(fourth.body.error?.message).toMatch(/modelservices short by 1/);
    expect((await quota()).modelservices).toMatchObject({ hard: 3, reserved: 3 });

    for (const id of ids) {
      expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    }
    await sys.untilState(ids, 'released');
    expect((await quota()).modelservices).toMatchObject({ reserved });
    expect(await sys.check()).toEqual([]);
  });

  it('an image the controller’s policy refuses at delivery becomes a conflict with no CR; the tenant can still delete it and gets its quota back', async () => {
    const before = (await quota()).cpu!.reserved;
    const r = await sys.api('/requests', { method: 'POST', body: { name: 'foreign', image: 'ghcr.io/x/miner:1', replicas: 1 }, idempotencyKey: 'foreign' });
    expect(r.status, JSON.stringify(r.body)).toBe(201); // the Worker's policy allows any registry
    const id = r.body.id as string;
    await sys.untilState([id], 'conflict', 60_000);
    const got = await sys.api(`/requests/${id}`);
    expect(got.body.lastError).toMatch(/image policy at delivery: registry ghcr.io \(ghcr.io\/x\/miner\) is not allowed/);
    expect(await sys.kube.getOrUndefined(paths.modelService(sys.tenantNamespace, `md-${id.toLowerCase()}`))).toBeUndefined();
    expect((await quota()).cpu).toMatchObject({ reserved: before + 250 });

    const del = await sys.api(`/requests/${id}`, { method: 'DELETE' });
    expect(del.status, JSON.stringify(del.body)).toBe(202);
    await sys.untilState([id], 'released');
    expect((await quota()).cpu).toMatchObject({ reserved: before });
    expect(await sys.check()).toEqual([]);
  });
});
