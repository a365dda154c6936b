// The ModelService reconciler against the real control plane (KWOK makes pods Ready), with the
// controller running in this process so its API writes and reconciles can be counted.
import { setTimeout as sleep } from 'node:timers/promises';
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveReader, type Reader } from '../../controller/modelservice/reader.ts';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { Metrics } from '../../controller/runtime/metrics.ts';
import { FINALIZER, LABELS, type ModelService } from '../../schema/model-service.ts';
import { IMAGES, makeModelService } from '../support/builders.ts';
import { controllerClient } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { bareController, counterSum, ensureCrd, kubectl, ops, paths, startInProcessOperator, type InProcessOperator, type Ops } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
let ns: { name: string; remove(): Promise<void> };
let op: InProcessOperator;
let k: Ops;

async function writesByResource(o: InProcessOperator): Promise<Record<string, number>> {
  const m = await o.metrics.kubeWrites.get();
  const out: Record<string, number> = {};
  for (const v of m.values) out[`${v.labels.resource}:${v.labels.verb}`] = v.value;
  return out;
}

beforeAll(async () => {
  ns = await createNamespace(core, 'op-ms');
  const client = new KubeClient({ kc });
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns.name }));
  await ensureCrd(client, ns.name);
  k = ops(client, ns.name);
  op = await startInProcessOperator(ns.name, { workers: 2 }); // as the namespace's modeldock-controller ServiceAccount
});
afterAll(async () => {
  await op?.stop();
  await ns?.remove();
});

describe('ModelService → Deployment + Service', () => {
  it('creates owned, labelled children; pods become Ready; status Running at the current generation', async () => {
    const w0 = await writesByResource(op);
    const created = await k.create(makeModelService('alpha').admitted('01JALPHA', 'acme').annotation('modeldock.io/admitted-at', '2026-01-01T00:00:00Z').obj());
    const ms = await k.waitPhase('alpha', 'Running', 1);
    await sleep(500);
    const w1 = await writesByResource(op);
    const delta = Object.fromEntries(Object.entries(w1).map(([r, n]) => [r, n - (w0[r] ?? 0)]).filter(([, n]) => n));
    console.log(`[measure] API writes from create to converged (Running), one ModelService: ${JSON.stringify(delta)}`);
    expect(ms.metadata.finalizers).toContain(FINALIZER);

    const dep = (await k.deployment('alpha'))!;
    const svc = (await k.service('alpha'))!;
    const owner = { apiVersion: 'modeldock.io/v1alpha1', kind: 'ModelService', name: 'alpha', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true };
    for (const child of [dep, svc]) {
      expect(child.metadata.ownerReferences).toEqual([owner]);
      expect(child.metadata.labels).toMatchObject({ [LABELS.managedBy]: 'modeldock', [LABELS.admissionId]: '01JALPHA', [LABELS.tenant]: 'acme' });
    }
    expect(dep.spec?.template?.metadata?.labels).toMatchObject({ [LABELS.admissionId]: '01JALPHA', [LABELS.tenant]: 'acme' });
    const pod = dep.spec?.template?.spec as unknown as { securityContext: object; containers: Array<{ securityContext: object; readinessProbe: object }> };
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(pod.containers[0]?.readinessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http' } });
    expect(svc.spec).toMatchObject({ type: 'ClusterIP', ports: [{ port: 8000, targetPort: 8000 }] });

    const pods = await k.pods('alpha');
    expect(pods).toHaveLength(1);
    expect(pods[0]?.metadata.labels).toMatchObject({ [LABELS.admissionId]: '01JALPHA', [LABELS.tenant]: 'acme' });
    expect(pods[0]?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');

    expect(ms.status).toMatchObject({
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      endpoint: `http://alpha.${ns.name}.svc:8000`,
      selector: `${LABELS.managedBy}=modeldock,${LABELS.modelService}=alpha`,
      admittedAt: '2026-01-01T00:00:00Z',
    });
    for (const f of ['deliveredAt', 'startedAt', 'readyAt'] as const) expect(ms.status?.[f], f).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(ms.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['Progressing', 'False'],
    ]);
    // One Event for both children, one for Running; the first rollout's Pending/Progressing steps are not news.
    const events = await kubectl('get', 'events.events.k8s.io', '-n', ns.name, '--field-selector', 'regarding.kind=ModelService,regarding.name=alpha', '-o', 'jsonpath={range .items[*]}{.reason}={.note}{"\\n"}{end}');
    expect(events.trim().split('\n').sort()).toEqual(['Created=Created Deployment alpha and Service alpha', 'Running=1/1 replicas available']);
  });

  it('a second reconcile of a converged object writes nothing and changes no resourceVersion', async () => {
    await k.waitPhase('alpha', 'Running', 1);
    await sleep(500); // let the last status/pod events settle
    const rv = async () => [(await k.get('alpha'))?.metadata.resourceVersion, (await k.deployment('alpha'))?.metadata.resourceVersion, (await k.service('alpha'))?.metadata.resourceVersion];
    const before = await rv();
    const writes = await op.writes();
    expect(await op.controller.reconcileOnce(`${ns.name}/alpha`)).toBe('success');
    expect(await op.controller.reconcileOnce(`${ns.name}/alpha`)).toBe('success');
    expect(await op.writes()).toBe(writes);
    expect(await rv()).toEqual(before);
    console.log(`[measure] API writes for a second reconcile of a converged ModelService: ${(await op.writes()) - writes}`);
  });

  it('a hand-made CR without admission labels reconciles; its children are labelled with its name', async () => {
    await k.create(makeModelService('bare').obj());
    await k.waitPhase('bare', 'Running', 1);
    expect((await k.deployment('bare'))?.metadata.labels).toMatchObject({ [LABELS.admissionId]: 'bare' });
    expect((await k.deployment('bare'))?.metadata.labels).not.toHaveProperty(LABELS.tenant);
  });
});

describe('drift is repaired', () => {
  it('a Service deleted by hand is recreated', async () => {
    const before = (await k.service('alpha'))!;
    await kubectl('delete', 'service', 'alpha', '-n', ns.name, '--wait=true');
    const after = await waitFor('the Service to be recreated', async () => {
      const s = await k.service('alpha');
      return s && s.metadata.uid !== before.metadata.uid ? s : undefined;
    });
    expect(after.metadata.ownerReferences?.[0]?.uid).toBe((await k.get('alpha'))?.metadata.uid);
    await k.waitPhase('alpha', 'Running');
  });

  it('kubectl scale deploy --replicas=0 is restored', async () => {
    await kubectl('scale', 'deployment/alpha', '-n', ns.name, '--replicas=0');
    await waitFor('spec.replicas restored to 1 with a Ready pod', async () => {
      const d = await k.deployment('alpha');
      return d?.spec?.replicas === 1 && d.status?.availableReplicas === 1;
    });
    await k.waitPhase('alpha', 'Running');
  });
});

describe('scaling', () => {
  it('spec.replicas 1 → 2: the Deployment follows; Progressing → Running; then kubectl scale msvc → 3', async () => {
    // Every write of the object is a watch event: record each (phase, observedGeneration) it went through.
    const phases: string[] = [];
    const watch = await new Watch(kc).watch(
      `/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices`,
      { fieldSelector: 'metadata.name=alpha' },
      (_type: string, m: ModelService) => {
        const p = `${m.status?.phase}@${m.status?.observedGeneration}`;
        if (phases.at(-1) !== p) phases.push(p);
      },
      () => undefined,
    );
    try {
      await k.create(makeModelService('slow').image(IMAGES.neverReady).obj());
      await k.waitPhase('slow', 'Progressing', 1); // pods Running but never Ready: honestly not Running

      const gen = (await k.patchSpec('alpha', { replicas: 2 })).metadata.generation!;
      await k.waitPhase('alpha', 'Running', gen);
      expect((await k.deployment('alpha'))?.spec?.replicas).toBe(2);
      expect((await k.get('alpha'))?.status).toMatchObject({ replicas: 2, availableReplicas: 2 });

      await kubectl('scale', 'msvc/alpha', '-n', ns.name, '--replicas=3');
      const ms3 = await waitFor('generation to move', async () => {
        const m = await k.get('alpha');
        return m && m.metadata.generation !== gen ? m : undefined;
      });
      const gen3 = ms3.metadata.generation!;
      await k.waitPhase('alpha', 'Running', gen3);
      expect((await k.deployment('alpha'))?.spec?.replicas).toBe(3);
      const scale = JSON.parse(await kubectl('get', '--raw', `/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices/alpha/scale`)) as { spec: { replicas: number }; status: { replicas: number; selector: string } };
      expect(scale).toMatchObject({ spec: { replicas: 3 }, status: { replicas: 3, selector: `${LABELS.managedBy}=modeldock,${LABELS.modelService}=alpha` } });

      await sleep(200);
      console.log(`[measure] phases of alpha while scaling: ${phases.join(' → ')}`);
      for (const g of [gen, gen3]) {
        const progressing = phases.indexOf(`Progressing@${g}`);
        expect(progressing, `Progressing@${g} in ${phases.join(',')}`).toBeGreaterThanOrEqual(0);
        expect(phases.indexOf(`Running@${g}`)).toBeGreaterThan(progressing);
      }
    } finally {
      watch.abort();
    }
  });
});

describe('failures surface in status', () => {
  it.each([
    ['pull', IMAGES.pullBackOff, { reason: 'ImagePullBackOff' }],
    ['crash', IMAGES.crashLoop, { reason: 'CrashLoopBackOff', exitCode: 1 }],
  ])('%s → Degraded with lastFailure', async (name, image, failure) => {
    await k.create(makeModelService(name).image(image).obj());
    const ms = await k.waitPhase(name, 'Degraded', 1);
    expect(ms.status?.lastFailure).toMatchObject({ ...failure, container: 'model' });
    expect(ms.status?.lastFailure?.pod).toMatch(new RegExp(`^${name}-`));
    expect(ms.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: failure.reason });
  });
});

describe('collapsing queue', () => {
  it('a burst of 50 updates to one object costs far fewer reconciles', async () => {
    await k.create(makeModelService('burst').obj());
    await k.waitPhase('burst', 'Running', 1);
    await sleep(300);
    const r0 = await op.reconciles();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 50 }, (_, i) => k.client.mergePatch(paths.modelService(ns.name, 'burst'), { metadata: { annotations: { 'burst/n': String(i) } } })));
    const burstMs = performance.now() - t0; // the API server serialises writes to one object
    await sleep(1000);
    await k.waitPhase('burst', 'Running', 1);
    const reconciles = (await op.reconciles()) - r0;
    const windows = Math.ceil(burstMs / 100); // the controller's 100 ms batch window
    console.log(`[measure] reconciles for a burst of 50 updates to one ModelService: ${reconciles} (the 50 writes took ${Math.round(burstMs)} ms = ${windows} batch windows)`);
    expect(reconciles).toBeGreaterThanOrEqual(1);
    expect(reconciles).toBeLessThanOrEqual(windows + 2); // at most one per window (+ the tail)
    expect(reconciles).toBeLessThan(50);
  });
});

describe('stale write → 409 → the next reconcile reads fresh state', () => {
  it('a controller working from a stale copy gets 409; its next reconcile (and a fresh instance given only the key) sets replicas to 2', async () => {
    // A namespace of its own, where no controller runs: only the instances made here act.
    const ns2 = await createNamespace(core, 'op-stale');
    try {
      const metrics = new Metrics();
      // The controller instances act as the ServiceAccount; set-up and asserts use the admin.
      const client = await controllerClient(ns2.name, { metrics });
      const k2 = ops(new KubeClient({ kc }), ns2.name);
      const key = `${ns2.name}/seed`;
      await k2.create(makeModelService('seed').replicas(1).obj());
      expect(await bareController(client, liveReader(client)).reconcileOnce(key)).toBe('success');
      await waitFor('the Deployment to be observed', async () => (await k2.deployment('seed'))?.status?.observedGeneration === 1);

      const stale = (await k2.get('seed'))!; // the copy a lagging cache would hold
      await k2.patchSpec('seed', { replicas: 2 });
      const staleReader: Reader = { ...liveReader(client), modelService: async () => structuredClone(stale) };
      const ctl = bareController(client, staleReader);
      const conflicts0 = await counterSum(metrics.restRequests, (l) => l.code === '409');
      expect(await ctl.reconcileOnce(key)).toBe('error');
      expect(await counterSum(metrics.restRequests, (l) => l.code === '409')).toBe(conflicts0 + 1);
      expect((await k2.deployment('seed'))?.spec?.replicas).toBe(1); // nothing written from the stale copy

      expect(await ctl.reconcileOnce(key)).toBe('success'); // marked fresh: reads the API server
      expect((await k2.deployment('seed'))?.spec?.replicas).toBe(2);
      expect((await k2.get('seed'))?.status?.observedGeneration).toBe(2);

      // A fresh instance given only the key converges too (the Deployment controller updates the
      // Deployment's status concurrently, so one of our guarded writes may meet a 409: retry).
      await k2.patchSpec('seed', { replicas: 3 });
      const fresh = bareController(client, liveReader(client));
      await waitFor('a fresh controller to reconcile', async () => (await fresh.reconcileOnce(key)) === 'success', { intervalMs: 50 });
      expect((await k2.deployment('seed'))?.spec?.replicas).toBe(3);
    } finally {
      await ns2.remove();
    }
  });
});

describe('deletion', () => {
  it('foreground deletion: children deleted (uid precondition), finalizer removed, object gone; a same-named foreign child is left alone', async () => {
    const ms = await k.create(makeModelService('doomed').obj());
    await k.waitPhase('doomed', 'Running', 1);
    const dep = (await k.deployment('doomed'))!;

    // Replace our Service by a same-named one that someone else owns.
    let foreignUid = '';
    await waitFor('a foreign Service under the child name', async () => {
      await kubectl('delete', 'service', 'doomed', '-n', ns.name, '--ignore-not-found', '--wait=true');
      const s = await k.client
        .create<{ metadata: { uid: string } }>(paths.services(ns.name), { metadata: { name: 'doomed', labels: { owner: 'someone-else' } }, spec: { ports: [{ port: 80 }] } })
        .catch(() => undefined); // the controller may have recreated ours first: try again
      foreignUid = s?.metadata.uid ?? '';
      return !!s;
    });
    const degraded = await k.waitPhase('doomed', 'Degraded');
    expect(degraded.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('ChildConflict');

    await k.client.delete(paths.modelService(ns.name, 'doomed'), { propagationPolicy: 'Foreground' });
    await waitFor('the ModelService to be gone', async () => !(await k.get('doomed')), { timeoutMs: 60_000 });
    expect(await k.deployment('doomed')).toBeUndefined();
    expect(await k.pods('doomed')).toEqual([]);
    const svc = await k.service('doomed');
    expect(svc?.metadata.uid).toBe(foreignUid);
    expect(dep.metadata.ownerReferences?.[0]?.uid).toBe(ms.metadata.uid);
  });
});
