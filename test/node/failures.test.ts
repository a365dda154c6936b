// What only a node can prove, on real containers: an image that does not exist, a container over
// its memory limit and one that exits with a message, a scale-up the node cannot hold, a slow
// shutdown that holds the charge until the container has exited, and drift (the Deployment scaled
// to 0 by hand, a container killed) repaired without any release. Each test makes and removes
// its own admission.
import { describe, expect, inject, it } from 'vitest';
import { time } from '../../ledger/columns.ts';
import { kubectl } from '../../scripts/testenv/install.ts';
import { kubeClients } from '../support/kube.ts';
import { containerPid, mockAdmission, onRealNode, podsOf, useNodeSystem } from '../support/real-node.ts';
import type { ApiBody } from '../support/tenant-api.ts';
import { waitFor } from '../support/wait.ts';

const system = useNodeSystem();

type Failure = { reason: string; message: string; exitCode?: number; pod?: string };

/** Polls the admission until its lastFailure passes `ok`. */
async function untilFailure(id: string, ok: (f: Failure) => boolean, timeoutMs = 90_000): Promise<Failure> {
  return waitFor(`admission ${id}: lastFailure`, async () => {
    const { status, body } = await system().api(`/requests/${id}`);
    expect(status, JSON.stringify(body)).toBe(200);
    const f = body.lastFailure as Failure | null;
    return f && ok(f) ? f : undefined;
  }, { timeoutMs });
}

/** DELETE, then released; the charge moved back exactly once. */
async function release(id: string): Promise<void> {
  expect((await system().api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
  await system().untilState([id], 'released', 120_000);
  expect(await system().ledger.count('SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = ?', [id, 'release'])).toBe(1);
}

async function admitOne(over: Record<string, unknown>): Promise<string> {
  const [id] = await system().admit(1, mockAdmission(over));
  return id!;
}

const movements = (id: string) => system().ledger.count('SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ?', [id]);

describe('failures a real node reports', () => {
  it('an image that does not exist: ErrImagePull / ImagePullBackOff in lastFailure', async () => {
    const id = await admitOne({ name: 'no-image', image: 'modeldock/does-not-exist:1' });
    const f = await untilFailure(id, (x) => x.reason === 'ErrImagePull' || x.reason === 'ImagePullBackOff');
    expect(f.message).toMatch(/does-not-exist/);
    expect(onRealNode(await podsOf(system().tenantNamespace, id))).toBe(true);
    await release(id);
  }, 240_000);

  it('over its memory limit: OOMKilled with exit code 137', async () => {
    const id = await admitOne({ name: 'oom', env: [{ name: 'MOCK_ALLOCATE_MIB', value: '512' }] });
    const f = await untilFailure(id, (x) => x.reason === 'OOMKilled');
    expect(f.exitCode).toBe(137);
    await release(id);
  }, 240_000);

  it('a crash with a termination message: its exit code and message', async () => {
    const env = [
      { name: 'MOCK_EXIT_AFTER_S', value: '2' },
      { name: 'MOCK_EXIT_CODE', value: '3' },
      { name: 'MOCK_EXIT_MESSAGE', value: 'model weights corrupt' },
    ];
    const id = await admitOne({ name: 'crash', env });
    const f = await untilFailure(id, (x) => x.exitCode === 3);
    expect(f.message).toBe('model weights corrupt');
    expect(['Error', 'CrashLoopBackOff']).toContain(f.reason);
    await release(id);
  }, 240_000);

  it("a scale-up beyond the node's capacity: the extra pod stays Pending and the tenant sees the scheduler's reason", async () => {
    const id = await admitOne({ name: 'big', resources: { cpu: '1', memory: '256Mi' } });
    await system().untilState([id], 'ready', 120_000);
    const patch = await system().api(`/requests/${id}`, { method: 'PATCH', body: { replicas: 3 }, idempotencyKey: `${id}-3` });
    expect(patch.status, JSON.stringify(patch.body)).toBe(202);
    // Two CPUs on the node: a third pod of 1 CPU cannot be placed.
    const f = await untilFailure(id, (x) => x.reason === 'Unschedulable');
    expect(f.message).toMatch(/Insufficient cpu/);
    const pods = await podsOf(system().tenantNamespace, id);
    const pending = pods.filter((p) => !p.spec?.nodeName);
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.every((p) => p.status?.phase === 'Pending')).toBe(true);
    await release(id);
  }, 240_000);

  it('a slow shutdown: after DELETE the charge is held while the container still runs, and released only after it exited', async () => {
    const id = await admitOne({ name: 'slow-stop', env: [{ name: 'MOCK_SHUTDOWN_DELAY_S', value: '8' }] });
    await system().untilState([id], 'ready', 120_000);
    const podIp = (await podsOf(system().tenantNamespace, id))[0]!.status!.podIP!;
    expect((await system().api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    // The container is still serving (unready, stopping) while the charge is held.
    let heldWhileRunning = 0;
    let lastAnswer = 0;
    let body: ApiBody = {};
    await waitFor(`admission ${id} released`, async () => {
      body = (await system().api(`/requests/${id}`)).body;
      const alive = await fetch(`http://${podIp}:8000/healthz`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status > 0, () => false);
      if (alive) {
        lastAnswer = Date.now();
        if (body.state !== 'released') heldWhileRunning++;
        expect(body.state, 'released while the container still answers').not.toBe('released');
      }
      return body.state === 'released';
    }, { timeoutMs: 120_000, intervalMs: 250 });
    expect(heldWhileRunning).toBeGreaterThan(0);
    const rows = await system().ledger.db.execute('SELECT at FROM quota_movement WHERE reservation_id = ? AND direction = ?', [id, 'release']);
    expect(rows.rows).toHaveLength(1);
    expect(Date.parse(time((rows.rows[0] as { at: unknown }).at))).toBeGreaterThanOrEqual(lastAnswer - 1000);
  }, 240_000);

  it('drift: the Deployment scaled to 0 by hand is restored, and a killed container is restarted by the kubelet, without any release', async () => {
    const id = await admitOne({ name: 'drift' });
    await system().untilState([id], 'ready', 120_000);
    const stack = inject('stack');
    const name = `md-${id.toLowerCase()}`;
    const { apps } = kubeClients();
    const before = (await apps.readNamespacedDeployment({ name, namespace: system().tenantNamespace })).metadata!.generation!;
    await kubectl(stack, '-n', system().tenantNamespace, 'scale', 'deploy', name, '--replicas=0');
    // Restored: two generations on (the scale to 0, then the controller's repair), back at 1
    // replica, rolled out, and one pod left (the old one may have been replaced), running and ready.
    await waitFor('the Deployment restored to 1 replica', async () => {
      const d = await apps.readNamespacedDeployment({ name, namespace: system().tenantNamespace });
      const s = d.status;
      const gen = d.metadata?.generation ?? 0;
      return gen >= before + 2 && d.spec?.replicas === 1 && (s?.observedGeneration ?? 0) >= gen && s?.replicas === 1 && s.readyReplicas === 1 ? d : undefined;
    }, { timeoutMs: 90_000 });
    const pod = await waitFor('one pod, running and ready', async () => {
      const pods = await podsOf(system().tenantNamespace, id);
      return pods.length === 1 && !pods[0]!.metadata?.deletionTimestamp && pods[0]!.status?.containerStatuses?.[0]?.ready === true ? pods[0] : undefined;
    }, { timeoutMs: 90_000 });
    const containerId = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
    const pid = await containerPid(containerId);
    process.kill(pid, 'SIGKILL');
    await waitFor('the kubelet restarted the killed container', async () => {
      const p = (await podsOf(system().tenantNamespace, id)).find((x) => x.metadata?.uid === pod.metadata?.uid);
      const cs = p?.status?.containerStatuses?.[0];
      return cs && (cs.restartCount ?? 0) >= 1 && cs.ready ? cs : undefined;
    }, { timeoutMs: 90_000 });
    const { body } = await system().api(`/requests/${id}`);
    expect(body.state).toBe('ready');
    expect(await movements(id)).toBe(1); // the charge only
    await release(id);
  }, 240_000);
});
