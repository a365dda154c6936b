// `node controller/main.ts` as real child processes against the real control plane:
// health/metrics endpoints, a crash between Deployment create and Service create, and two
// replicas under leader election (only the leader writes; SIGKILL the leader → takeover).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { makeModelService } from '../support/builders.ts';
import { metricSum as sample, startController, type ControllerProcess } from '../support/controller-process.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { labelAsTenantNamespace } from '../support/install.ts';
import { ensureCrd, ops, paths } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
const client = new KubeClient({ kc });
const started: ControllerProcess[] = [];
let ns: { name: string; remove(): Promise<void> };
beforeAll(async () => {
  ns = await createNamespace(core, 'op-proc');
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
  await ensureCrd(client, ns.name);
  await labelAsTenantNamespace(ns.name, 'acme'); // the controllers here act on ModelServices made by hand in it
});
afterAll(async () => {
  await Promise.all(started.map((c) => c.proc.stop()));
  await ns?.remove();
});

describe('controller process', () => {
  it('a crash once the Deployment create answered (the Service create sent with it, answered or not): a new process converges without recreating either', async () => {
    const nsc = await createNamespace(core, 'op-crash');
    await labelAsTenantNamespace(nsc.name, 'acme');
    try {
      const k = ops(client, nsc.name);
      const crashing = await startController('ctl-crash', nsc.name, { MODELDOCK_CRASH_AT: 'after-deployment-create' });
      started.push(crashing);
      await k.create(makeModelService('crashy').obj());
      await waitFor('the controller to SIGKILL itself', async () => !crashing.alive(), { timeoutMs: 30_000 });
      expect(readFileSync(crashing.proc.logFile, 'utf8')).toContain('crash point reached');
      const dep = await k.deployment('crashy');
      expect(dep).toBeDefined();
      const svc = await k.service('crashy'); // the API server may have created it before the process died

      // The crashed leader never released its lease: the successor waits for it to expire (4 s).
      const successor = await startController('ctl-successor', nsc.name);
      started.push(successor);
      const ms = await k.waitPhase('crashy', 'Running', 1);
      const svcAfter = await k.service('crashy');
      expect(svcAfter?.metadata.ownerReferences?.[0]?.uid).toBe(ms.metadata.uid);
      const after = await k.deployment('crashy');
      expect(after?.metadata.uid).toBe(dep?.metadata.uid); // never deleted/recreated
      if (svc) expect(svcAfter?.metadata.uid).toBe(svc.metadata.uid);
      const creates = await successor.metrics();
      expect(sample(creates, 'modeldock_kube_writes_total', (l) => l.resource === 'deployments' && l.verb === 'create')).toBe(0);
      expect(sample(creates, 'modeldock_kube_writes_total', (l) => l.resource === 'services' && l.verb === 'create')).toBe(svc ? 0 : 1);
      await successor.proc.stop();
    } finally {
      await nsc.remove();
    }
  });

  it('two processes: only the leader writes; SIGKILL the leader → the other takes over within the lease duration', async () => {
    const k = ops(client, ns.name);
    const a = await startController('ctl-a', ns.name);
    started.push(a);
    await waitFor('ctl-a to lead', async () => sample(await a.metrics(), 'leader_election_master_status') === 1);
    const b = await startController('ctl-b', ns.name);
    started.push(b);

    // health and readiness on both; metric names operators know
    for (const c of [a, b]) {
      expect((await fetch(`http://127.0.0.1:${c.port}/healthz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${c.port}/readyz`)).status).toBe(200);
    }
    await k.create(makeModelService('ha').admitted('01JHAHAHA', 'acme').obj());
    await k.waitPhase('ha', 'Running', 1);
    // Structured JSON logs carry the reconcile key and the admission id.
    const lines = readFileSync(a.proc.logFile, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.msg === 'Deployment created')).toMatchObject({ level: 'info', controller: 'modelservice', key: `${ns.name}/ha`, admissionId: '01JHAHAHA' });
    const [ma, mb] = [await a.metrics(), await b.metrics()];
    for (const name of [
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds_count',
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_retries_total',
      'workqueue_queue_duration_seconds_count',
      'workqueue_work_duration_seconds_count',
      'leader_election_master_status',
    ]) {
      expect(ma, name).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
    const nonLease = (l: Record<string, string>) => l.resource !== 'leases';
    expect(sample(ma, 'modeldock_kube_writes_total', nonLease)).toBeGreaterThan(0);
    expect(sample(mb, 'modeldock_kube_writes_total', nonLease)).toBe(0);
    expect(sample(mb, 'controller_runtime_reconcile_total')).toBe(0);
    expect(sample(mb, 'leader_election_master_status')).toBe(0);

    // Crash the leader (no graceful release).
    const t0 = performance.now();
    process.kill(-a.proc.pid, 'SIGKILL');
    await waitFor('ctl-b to lead', async () => sample(await b.metrics(), 'leader_election_master_status') === 1, { timeoutMs: 30_000, intervalMs: 100 });
    const takeoverMs = performance.now() - t0;
    const lease = await client.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(paths.lease(ns.name, 'modeldock-controller'));
    expect(lease.spec.holderIdentity).toMatch(/^ctl-b_/);
    console.log(`[measure] leader takeover after SIGKILL: ${Math.round(takeoverMs)} ms (lease 4000 ms, retry 500 ms)`);
    // Expiry is judged from when ctl-b last saw the lease change (≤ one retry period, jittered ×2.2, before the kill).
    expect(takeoverMs).toBeLessThan(4000 + 2 * 2.2 * 500 + 2000);

    // The new leader reconciles.
    const gen = (await k.patchSpec('ha', { replicas: 2 })).metadata.generation;
    await k.waitPhase('ha', 'Running', gen);
    expect((await k.deployment('ha'))?.spec?.replicas).toBe(2);

    // Graceful shutdown releases the lease: a third process takes over at once (no expiry wait).
    // ctl-c campaigns from its start: once ctl-b hands the lease back (empty holder) it takes it
    // on its next try, however many tries it made before — nothing to wait for here.
    const c = await startController('ctl-c', ns.name);
    started.push(c);
    const t1 = performance.now();
    await b.proc.stop(); // SIGTERM: drain, release
    await waitFor('ctl-c to lead', async () => sample(await c.metrics(), 'leader_election_master_status') === 1, { timeoutMs: 30_000, intervalMs: 100 });
    const handoverMs = performance.now() - t1;
    console.log(`[measure] leader handover after graceful shutdown: ${Math.round(handoverMs)} ms`);
    expect(readFileSync(b.proc.logFile, 'utf8')).toContain('leader lease released');
    expect(handoverMs).toBeLessThan(4000); // faster than an expiry
  });

  it('a leader that loses its lease exits the process', async () => {
    const nsl = await createNamespace(core, 'op-lose');
    try {
      const ctl = await startController('ctl-lose', nsl.name);
      started.push(ctl);
      await waitFor('ctl-lose to lead', async () => sample(await ctl.metrics(), 'leader_election_master_status') === 1);
      // Someone else takes the lease (as after a long pause of ours): we must stop acting at once.
      const path = paths.lease(nsl.name, 'modeldock-controller');
      // A merge patch carries no resourceVersion: it cannot lose a race with the leader's own renewal.
      await client.mergePatch(path, { spec: { holderIdentity: 'intruder', leaseDurationSeconds: 60 } });
      await waitFor('the controller to exit', async () => !ctl.alive(), { timeoutMs: 15_000 });
      expect(readFileSync(ctl.proc.logFile, 'utf8')).toMatch(/"msg":"exiting: leadership lost","reason":"lease held by intruder"/);
    } finally {
      await nsl.remove();
    }
  });
});
