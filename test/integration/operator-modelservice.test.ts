// The ModelService reconciler against the real control plane (KWOK makes pods Ready), with the
// controller running in this process so its API writes and reconciles can be counted.
// Every test makes its own ModelServices. They share one namespace and operator, except the tests
// that count the operator's writes or reconciles: those get a namespace and operator of their own,
// so nothing another test left behind (a crash-looping pod, a never-ready one) adds to the count.
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { cacheReader, liveReader, type Reader } from '../../controller/modelservice/reader.ts';
import type { Deployment, EndpointSlice, Pod, Service } from '../../controller/modelservice/types.ts';
import type { KubeObject } from '../../controller/runtime/informer.ts';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { Metrics } from '../../controller/runtime/metrics.ts';
import { FINALIZER, LABELS, type ModelService } from '../../schema/model-service.ts';
import { IMAGES, makeModelService, type ModelServiceInput } from '../support/builders.ts';
import { controllerClient, labelAsTenantNamespace } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { bareController, counterSum, ensureCrd, kubectl, ops, paths, startInProcessOperator, type InProcessOperator, type Ops } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
let ns: { name: string; remove(): Promise<void> };
let op: InProcessOperator;
let k: Ops;

interface OperatorFixture {
  ns: string;
  op: InProcessOperator;
  k: Ops;
}

/** A fresh namespace whose default ServiceAccount exists (pods need it). */
async function podNamespace(prefix: string): Promise<{ name: string; remove(): Promise<void> }> {
  const n = await createNamespace(core, prefix);
  await waitFor('default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: n.name }));
  return n;
}

/** A namespace and an in-process operator of this test's own, stopped and removed when it ends. */
async function ownOperator(prefix: string): Promise<OperatorFixture> {
  const n = await podNamespace(prefix);
  const o = await startInProcessOperator(n.name, { workers: 2 }).catch(async (err: unknown) => {
    await n.remove();
    throw err;
  });
  onTestFinished(async () => {
    await o.stop();
    await n.remove();
  });
  return { ns: n.name, op: o, k: ops(new KubeClient({ kc }), n.name) };
}

/** Creates the ModelService and waits until it is Running at generation 1. */
async function createRunning(kk: Ops, input: ModelServiceInput): Promise<{ created: ModelService; ms: ModelService }> {
  const created = await kk.create(input);
  return { created, ms: await kk.waitPhase(input.metadata.name, 'Running', 1) };
}

/** The reasons of the Events about ModelService `name`, sorted, as `reason=note`. */
async function eventsOf(namespace: string, name: string): Promise<string[]> {
  const out = await kubectl('get', 'events.events.k8s.io', '-n', namespace, '--field-selector', `regarding.kind=ModelService,regarding.name=${name}`, '-o', 'jsonpath={range .items[*]}{.reason}={.note}{"\\n"}{end}');
  return out.trim().split('\n').filter(Boolean).sort();
}

const versions = (objs: ReadonlyArray<KubeObject | undefined>) =>
  objs
    .filter((o): o is KubeObject => o !== undefined)
    .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
    .sort()
    .join(' ');

/**
 * Waits until `name` is at rest and the operator's cache holds it: Running at its generation, the
 * Deployment rolled out (the Deployment controller has nothing left to write), every replica a
 * ready endpoint, the Running Event recorded, and the informers' copies of the object, its
 * children, pods and EndpointSlices at the API server's resourceVersions. A reconcile from then on
 * reads the same world as the API server holds.
 */
async function settled(f: OperatorFixture, name: string): Promise<void> {
  const cache = f.op.mgr.cache;
  const cached = cacheReader({
    modelServices: cache.informer<ModelService & { metadata: { name: string } }>('ModelService'),
    deployments: cache.informer<Deployment>('Deployment'),
    services: cache.informer<Service>('Service'),
    pods: cache.informer<Pod>('Pod'),
    endpointSlices: cache.informer<EndpointSlice>('EndpointSlice'),
  });
  const live = liveReader(f.k.client);
  const world = async (r: Reader) => {
    const [ms, dep, svc, pods, slices] = await Promise.all([r.modelService(f.ns, name), r.deployment(f.ns, name), r.service(f.ns, name), r.pods(f.ns, name), r.endpointSlices(f.ns, name)]);
    return { ms, dep, svc, pods, slices, versions: versions([ms, dep, svc, ...pods, ...slices]) };
  };
  // Each unmet condition throws, so a timeout names the one that never held.
  const need = (ok: boolean, what: string) => {
    if (!ok) throw new Error(what);
  };
  await waitFor(`${name} at rest and in the operator's cache`, async () => {
    const api = await world(live);
    const want = api.ms?.spec.replicas;
    const ds = api.dep?.status;
    need(api.ms?.status?.phase === 'Running' && api.ms.status.observedGeneration === api.ms.metadata.generation, `phase ${api.ms?.status?.phase}@${api.ms?.status?.observedGeneration}`);
    need(ds?.observedGeneration === api.dep?.metadata.generation && [ds?.replicas, ds?.updatedReplicas, ds?.readyReplicas, ds?.availableReplicas].every((n) => n === want), `Deployment status ${JSON.stringify(ds)}`);
    need(ds?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable') === true, 'Deployment not yet NewReplicaSetAvailable');
    need(api.slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).length === want, 'ready endpoints ≠ replicas');
    need((await eventsOf(f.ns, name)).some((e) => e.startsWith('Running=')), 'no Running Event yet');
    const mine = await world(cached);
    need(mine.versions === api.versions, `cache [${mine.versions}] ≠ API [${api.versions}]`);
    return true;
  });
}

/** How many observations a histogram of the modelservice queue holds. */
async function observations(h: Metrics['queueDuration'] | Metrics['workDuration']): Promise<number> {
  const m = await h.get();
  return m.values.filter((v) => v.metricName === `${m.name}_count` && v.labels.name === 'modelservice').reduce((a, v) => a + v.value, 0);
}
/** Keys the operator's queue handed to a worker so far (each one reconcile of it). */
const taken = (o: InProcessOperator) => observations(o.metrics.queueDuration);
/** Every key added to the operator's queue has been processed and none waits (a key still in its batch delay is not seen). */
async function queueIdle(o: InProcessOperator): Promise<boolean> {
  return (await counterSum(o.metrics.queueAdds, (l) => l.name === 'modelservice')) === (await observations(o.metrics.workDuration));
}

async function writesByResource(o: InProcessOperator): Promise<Record<string, number>> {
  const m = await o.metrics.kubeWrites.get();
  const out: Record<string, number> = {};
  for (const v of m.values) out[`${v.labels.resource}:${v.labels.verb}`] = v.value;
  return out;
}

beforeAll(async () => {
  ns = await podNamespace('op-ms');
  const client = new KubeClient({ kc });
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
    const { created, ms } = await createRunning(k, makeModelService('alpha').admitted('01JALPHA', 'acme').annotation('modeldock.io/admitted-at', '2026-01-01T00:00:00Z').obj());
    // One Event for both children, one for Running; the first rollout's Pending/Progressing steps are not news.
    // The Running Event is the operator's last write of the rollout (Events are sent asynchronously).
    const expected = ['Created=Created Deployment alpha and Service alpha', 'Running=1/1 replicas available'];
    await waitFor('the Created and Running Events', async () => {
      const events = await eventsOf(ns.name, 'alpha');
      return events.length >= expected.length ? events : undefined;
    });
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
    expect(await eventsOf(ns.name, 'alpha')).toEqual(expected);
  });

  it('a second reconcile of a converged object writes nothing and changes no resourceVersion', async () => {
    // op.writes() counts every write of the operator: one of this test's own sees only 'steady'.
    const own = await ownOperator('op-steady');
    await createRunning(own.k, makeModelService('steady').obj());
    await settled(own, 'steady');
    const rv = async () => [(await own.k.get('steady'))?.metadata.resourceVersion, (await own.k.deployment('steady'))?.metadata.resourceVersion, (await own.k.service('steady'))?.metadata.resourceVersion];
    const before = await rv();
    const writes = await own.op.writes();
    expect(await own.op.controller.reconcileOnce(`${own.ns}/steady`)).toBe('success');
    expect(await own.op.controller.reconcileOnce(`${own.ns}/steady`)).toBe('success');
    expect(await own.op.writes()).toBe(writes);
    expect(await rv()).toEqual(before);
    console.log(`[measure] API writes for a second reconcile of a converged ModelService: ${(await own.op.writes()) - writes}`);
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
    await createRunning(k, makeModelService('drift-svc').obj());
    const before = (await k.service('drift-svc'))!;
    await kubectl('delete', 'service', 'drift-svc', '-n', ns.name, '--wait=true');
    const after = await waitFor('the Service to be recreated', async () => {
      const s = await k.service('drift-svc');
      return s && s.metadata.uid !== before.metadata.uid ? s : undefined;
    });
    expect(after.metadata.ownerReferences?.[0]?.uid).toBe((await k.get('drift-svc'))?.metadata.uid);
    await k.waitPhase('drift-svc', 'Running');
  });

  it('kubectl scale deploy --replicas=0 is restored', async () => {
    await createRunning(k, makeModelService('drift-scale').obj());
    await kubectl('scale', 'deployment/drift-scale', '-n', ns.name, '--replicas=0');
    await waitFor('spec.replicas restored to 1 with a Ready pod', async () => {
      const d = await k.deployment('drift-scale');
      return d?.spec?.replicas === 1 && d.status?.availableReplicas === 1;
    });
    await k.waitPhase('drift-scale', 'Running');
  });
});

describe('scaling', () => {
  it('spec.replicas 1 → 2: the Deployment follows; Progressing → Running; then kubectl scale msvc → 3', async () => {
    // Every write of the object is a watch event: record each (phase, observedGeneration) it went through.
    await createRunning(k, makeModelService('scaled').obj());
    const phases: string[] = [];
    const watch = await new Watch(kc).watch(
      `/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices`,
      { fieldSelector: 'metadata.name=scaled' },
      (_type: string, m: ModelService) => {
        const p = `${m.status?.phase}@${m.status?.observedGeneration}`;
        if (phases.at(-1) !== p) phases.push(p);
      },
      () => undefined,
    );
    try {
      await k.create(makeModelService('slow').image(IMAGES.neverReady).obj());
      await k.waitPhase('slow', 'Progressing', 1); // pods Running but never Ready: honestly not Running

      const gen = (await k.patchSpec('scaled', { replicas: 2 })).metadata.generation!;
      await k.waitPhase('scaled', 'Running', gen);
      expect((await k.deployment('scaled'))?.spec?.replicas).toBe(2);
      expect((await k.get('scaled'))?.status).toMatchObject({ replicas: 2, availableReplicas: 2 });

      await kubectl('scale', 'msvc/scaled', '-n', ns.name, '--replicas=3');
      const ms3 = await waitFor('generation to move', async () => {
        const m = await k.get('scaled');
        return m && m.metadata.generation !== gen ? m : undefined;
      });
      const gen3 = ms3.metadata.generation!;
      await k.waitPhase('scaled', 'Running', gen3);
      expect((await k.deployment('scaled'))?.spec?.replicas).toBe(3);
      const scale = JSON.parse(await kubectl('get', '--raw', `/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices/scaled/scale`)) as { spec: { replicas: number }; status: { replicas: number; selector: string } };
      expect(scale).toMatchObject({ spec: { replicas: 3 }, status: { replicas: 3, selector: `${LABELS.managedBy}=modeldock,${LABELS.modelService}=scaled` } });

      // The watch delivers the last write too: Running at the last generation.
      await waitFor(`the watch to see Running@${gen3}`, async () => phases.includes(`Running@${gen3}`));
      console.log(`[measure] phases of scaled while scaling: ${phases.join(' → ')}`);
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
    // op.reconciles() counts every key: an operator of this test's own has only 'burst'.
    const own = await ownOperator('op-burst');
    await createRunning(own.k, makeModelService('burst').obj());
    await settled(own, 'burst');
    await waitFor("the operator to finish the rollout's reconciles", () => queueIdle(own.op));
    // For each version of 'burst' the operator's cache receives: how many keys its queue had
    // handed out by then. Any key taken after the last version arrived is a reconcile of it.
    const takenAt = new Map<number, Promise<number>>();
    own.op.mgr.cache.informer<ModelService>('ModelService').addHandlers({ update: (m) => void takenAt.set(Number(m.metadata.resourceVersion), taken(own.op)) });
    const r0 = await own.op.reconciles();
    const t0 = performance.now();
    const written = await Promise.all(Array.from({ length: 50 }, (_, i) => own.k.client.mergePatch<ModelService>(paths.modelService(own.ns, 'burst'), { metadata: { annotations: { 'burst/n': String(i) } } })));
    const burstMs = performance.now() - t0; // the API server serialises writes to one object
    const last = Math.max(...written.map((m) => Number(m.metadata.resourceVersion)));
    // (A relisting watch may skip versions: the first at or after the last write will do.)
    const takenAtLast = await waitFor(`the operator's cache to receive the last write (${last})`, async () => [...takenAt].find(([rv]) => rv >= last)?.[1]);
    await waitFor('a reconcile of the last write, and nothing left in the queue', async () => (await taken(own.op)) > takenAtLast && (await queueIdle(own.op)));
    await own.k.waitPhase('burst', 'Running', 1);
    const reconciles = (await own.op.reconciles()) - r0;
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
      await labelAsTenantNamespace(ns2.name, 'acme');
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
