// `npm run tenant -- resolve <admission-id> --release|--keep --reason "…"` against the real
// stack: the command line as an operator runs it (DATABASE_URL + the admin
// kubeconfig), a conflict made by hand in the ledger, the CR and a pod real objects in the API
// server. It refuses while the CR with the bound UID or a pod of the admission exists; --release
// gives the quota back exactly once through one conditional transaction with its audit row;
// --keep records the decision and keeps the charge.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { checkLedger } from '../../scripts/operator/check.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { transition } from '../../controller/reservation/transitions.ts';
import { KubeClient, paths } from '../../controller/runtime/kube.ts';
import { admit } from '../../functions/services/admit.ts';
import { crNameFor } from '../../schema/admission.ts';
import { admissionOf } from '../support/policy.ts';
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { ensureCrd } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

let L: LedgerDatabase;
let kube: KubeClient;
let ns: { name: string; remove(): Promise<void> };
beforeAll(async () => {
  L = await createLedgerDatabase();
  await L.setQuota('acme', 'cpu=8', 'memory=16Gi');
  const { kc, core } = kubeClients();
  kube = new KubeClient({ kc });
  ns = await createNamespace(core, 'resolve');
  await ensureCrd(kube, ns.name);
});
afterAll(async () => {
  await ns?.remove();
  await L?.drop();
});

/** `npm run tenant -- resolve …` as a child process; its exit code and output. */
function resolveCli(...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'scripts/tenant.ts'), 'resolve', ...args],
      { cwd: repoRoot, env: { PATH: process.env.PATH, DATABASE_URL: L.url, KUBECONFIG: inject('stack').kubeconfig, NAMESPACE: ns.name }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

/** Limits inside the namespace's LimitRange and ResourceQuota (k8s/base/limits.yaml): they refuse a pod without. */
const LIMITS = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } };

let n = 0;
/** An admission charged 500m / 512Mi, moved to conflict, bound to `uid` (the CR the controller created). */
async function conflictBoundTo(uid: string | null): Promise<string> {
  const parsed = admissionOf({ name: `m${++n}`, image: 'ghcr.io/acme/m:1', replicas: 1, resources: { cpu: '500m', memory: '512Mi' } });
  const { admission } = await admit(L.deps(), { tenant: 'acme', idempotencyKey: `k${n}`, requestId: `r${n}`, parsed });
  const now = new Date();
  if (uid) {
    await L.db.execute(`INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, created_at, updated_at) VALUES ('acme', ?, ?, ?, ?, ?, ?)`, [
      admission.id, ns.name, crNameFor(admission.id), uid, now, now,
    ]);
  }
  const epoch = await acquireEpoch(L.db, 'default', 'test', now);
  expect(await transition(L.db, admission, ['admitted'], 'conflict', epoch, now, 'made by the test')).toBe(true);
  return admission.id;
}

async function createCr(id: string): Promise<ModelService> {
  return kube.create<ModelService>(paths.modelServices(ns.name), {
    apiVersion: 'modeldock.io/v1alpha1',
    kind: 'ModelService',
    metadata: { name: crNameFor(id), labels: { [LABELS.admissionId]: id, [LABELS.tenant]: 'acme' } },
    spec: { image: 'ghcr.io/acme/m:1', replicas: 0, resources: { cpu: '500m', memory: '512Mi' } },
  });
}

const used = async () => Object.fromEntries((await L.db.execute(`SELECT resource, used FROM tenant_quota WHERE tenant = 'acme'`)).rows.map((r) => [r.resource, Number(r.used)]));
const movements = async (id: string) =>
  (await L.db.execute('SELECT direction, note FROM quota_movement WHERE reservation_id = ? ORDER BY direction', [id])).rows.map((r) => ({ direction: r.direction, note: r.note }));
const stateOf = async (id: string) => String((await L.db.execute('SELECT state FROM reservation WHERE id = ?', [id])).rows[0]?.state);

describe('npm run tenant -- resolve', () => {
  it('refuses while the CR with the bound UID or a pod of the admission exists; then --release gives the quota back once', async () => {
    const id = await conflictBoundTo(null);
    const cr = await createCr(id);
    await L.db.execute(`INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, created_at, updated_at) VALUES ('acme', ?, ?, ?, ?, NOW(3), NOW(3))`, [
      id, ns.name, cr.metadata.name, cr.metadata.uid ?? '',
    ]);
    const charged0 = await used();
    const fp = await L.fingerprint();

    const refusedCr = await resolveCli(id, '--release', '--reason', 'operator checked');
    expect(refusedCr.code).toBe(3);
    expect(refusedCr.out).toMatch(/refused: the ModelService .* with the bound UID .* still exists/);
    expect(await L.fingerprint()).toBe(fp);

    await kube.delete(paths.modelService(ns.name, cr.metadata.name));
    await waitFor('the CR to be gone', async () => (await kube.getOrUndefined(paths.modelService(ns.name, cr.metadata.name))) === undefined);
    const pod = `${cr.metadata.name}-leftover`;
    await kube.create(paths.pods(ns.name), {
      metadata: { name: pod, labels: { [LABELS.admissionId]: id } },
      spec: { containers: [{ name: 'c', image: 'ghcr.io/acme/m:1', resources: LIMITS }] },
    });
    const refusedPod = await resolveCli(id, '--release', '--reason', 'operator checked');
    expect(refusedPod.code).toBe(3);
    expect(refusedPod.out).toContain(`refused: 1 pod(s) of the admission still exist: ${ns.name}/${pod}`);
    expect(await L.fingerprint()).toBe(fp);

    await kube.request('DELETE', `${paths.pods(ns.name)}/${pod}`, { query: { gracePeriodSeconds: 0 } });
    await waitFor('the pod to be gone', async () => (await kube.getOrUndefined(`${paths.pods(ns.name)}/${pod}`)) === undefined);
    const ok = await resolveCli(id, '--release', '--reason', 'CR replaced by hand; verified nothing runs');
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.out).toContain('state=released');
    expect(await stateOf(id)).toBe('released');
    expect((await used()).cpu).toBe(charged0.cpu! - 500);
    expect((await used()).memory).toBe(charged0.memory! - 512);
    expect(await movements(id)).toEqual([
      { direction: 'charge', note: null },
      { direction: 'release', note: null },
      { direction: 'resolve-release', note: 'CR replaced by hand; verified nothing runs' },
    ]);

    const again = await resolveCli(id, '--release', '--reason', 'twice');
    expect(again.code).toBe(3);
    expect(again.out).toMatch(/is released, not in conflict/);
    expect((await used()).cpu).toBe(charged0.cpu! - 500);
    expect(await checkLedger(L.db, null, ns.name)).toEqual([]);
  });

  it('--keep records the decision and keeps the charge; a second --keep is refused; --release later still works', async () => {
    const id = await conflictBoundTo('uid-of-a-cr-long-gone');
    const charged = await used();

    const kept = await resolveCli(id, '--keep', '--reason', 'tenant disputes; keep charged');
    expect(kept).toMatchObject({ code: 0 });
    expect(kept.out).toContain('charge kept');
    expect(await stateOf(id)).toBe('conflict');
    expect(await used()).toEqual(charged);
    expect(await movements(id)).toEqual([
      { direction: 'charge', note: null },
      { direction: 'resolve-keep', note: 'tenant disputes; keep charged' },
    ]);
    const lastError = (await L.db.execute('SELECT last_error FROM reservation WHERE id = ?', [id])).rows[0]?.last_error;
    expect(lastError).toBe('resolved by an operator (keep): tenant disputes; keep charged');

    const twice = await resolveCli(id, '--keep', '--reason', 'again');
    expect(twice.code).toBe(3);
    expect(twice.out).toMatch(/already resolved with --keep/);
    expect(await used()).toEqual(charged);

    expect((await resolveCli(id, '--release', '--reason', 'dispute settled')).code).toBe(0);
    expect((await used()).cpu).toBe(charged.cpu! - 500);
    expect((await movements(id)).map((m) => m.direction)).toEqual(['charge', 'release', 'resolve-keep', 'resolve-release']);
    expect(await checkLedger(L.db, null, ns.name)).toEqual([]);
  });

  it('refuses bad usage with exit code 2 and writes nothing', async () => {
    const fp = await L.fingerprint();
    expect((await resolveCli('01M8KD1WX8FZMBN60NK93TRSF5', '--release')).code).toBe(2);
    expect((await resolveCli('01M8KD1WX8FZMBN60NK93TRSF5', '--release', '--reason', 'x')).code).toBe(3); // no such admission
    expect(await L.fingerprint()).toBe(fp);
  });
});
