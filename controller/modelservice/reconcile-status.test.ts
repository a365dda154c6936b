// The status writes of a new ModelService's rollout, reconcile by reconcile, against the in-memory
// API server (fake-api.ts): what the children report between two reconciles is set by the test.
import { describe, expect, it } from 'vitest';
import { FINALIZER, type ModelService } from '../../schema/model-service.ts';
import type { Result } from '../runtime/controller.ts';
import { paths } from '../runtime/kube.ts';
import { silentLogger } from '../runtime/log.ts';
import { fakeApi, type FakeApi } from './fake-api.ts';
import { modelServiceReconciler, STATUS_HOLD_MS, type StatusHoldMs } from './reconcile.ts';
import type { Deployment, EndpointSlice, Pod } from './types.ts';

const ns = 'lab';
const name = 'chat';
const msPath = paths.modelService(ns, name);
const depPath = paths.deployment(ns, name);
const statusWrite = `update ${msPath}/status`;
const children = [`create ${paths.deployments(ns)}`, `create ${paths.services(ns)}`];

/** A fake API holding a new ModelService of one replica, with the finalizer (as the ledger creates it) or without. */
function world(finalizer = true): FakeApi {
  const api = fakeApi();
  api.objects.set(msPath, {
    apiVersion: 'modeldock.io/v1alpha1',
    kind: 'ModelService',
    metadata: { name, namespace: ns, uid: 'ms-uid', generation: 1, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', ...(finalizer ? { finalizers: [FINALIZER] } : {}) },
    spec: { image: 'example.invalid/m:1', replicas: 1, resources: { cpu: '1', memory: '1Gi' } },
  } as ModelService);
  return api;
}

/** The Deployment controller's report: observed, `available` of 1 replica available. */
function deploymentReports(api: FakeApi, available: number): void {
  const d = api.objects.get(depPath) as Deployment;
  api.objects.set(depPath, { ...d, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: available, availableReplicas: available } } as Deployment);
}
const runningPod: Pod = { metadata: { name: 'chat-1' }, spec: { nodeName: 'n' }, status: { startTime: '2026-01-01T00:00:01Z', containerStatuses: [{ name: 'model', ready: true, state: { running: { startedAt: '2026-01-01T00:00:02Z' } } }] } };
const failingPod: Pod = { metadata: { name: 'chat-1' }, spec: { nodeName: 'n' }, status: { containerStatuses: [{ name: 'model', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } }] } };
const readySlice: EndpointSlice = { metadata: { name: 'chat-x', labels: { 'kubernetes.io/service-name': name } }, endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }] };

function controller(api: FakeApi, statusHoldMs?: StatusHoldMs) {
  const clock = { ms: 0 };
  const reconcile = modelServiceReconciler({ client: api.client, cache: api.reader, events: { record: () => undefined }, now: () => new Date('2026-01-01T00:00:05Z'), statusHoldMs, monotonicNow: () => clock.ms });
  /** One reconcile `afterMs` after the previous one: its result and the writes it made. */
  return async (afterMs = 0): Promise<{ result: Result; writes: string[] }> => {
    clock.ms += afterMs;
    const before = api.writes.length;
    const result = (await reconcile({ namespace: ns, name, key: `${ns}/${name}` }, { log: silentLogger, fresh: false, signal: new AbortController().signal })) ?? {};
    return { result, writes: api.writes.slice(before).map((w) => `${w.verb} ${w.path}`) };
  };
}
const status = (api: FakeApi) => (api.objects.get(msPath) as ModelService).status;

describe('status writes of a first rollout', () => {
  it('pods scheduled, started and listed ready before the Deployment controller reports: one status write (Running), two creates, no finalizer patch', async () => {
    const api = world();
    const step = controller(api, STATUS_HOLD_MS); // the shipped bounds (setup.ts)
    expect(await step()).toEqual({ result: { requeueAfterMs: 10_000 }, writes: children }); // Pending: held
    api.pods = [runningPod];
    expect(await step(1500)).toEqual({ result: { requeueAfterMs: 8500 }, writes: [] }); // still Pending, with startedAt: held
    api.endpointSlices = [readySlice];
    expect(await step(1500)).toEqual({ result: { requeueAfterMs: 7000 }, writes: [] }); // and readyAt: held
    deploymentReports(api, 1);
    expect(await step(1500)).toEqual({ result: {}, writes: [statusWrite] }); // the report: Running, written at once
    expect(status(api)).toMatchObject({ phase: 'Running', availableReplicas: 1, startedAt: '2026-01-01T00:00:02Z', deliveredAt: '2026-01-01T00:00:00Z', readyAt: '2026-01-01T00:00:05Z' });
    expect(await step(10_000)).toEqual({ result: {}, writes: [] }); // the hold's requeue finds nothing to write
  });

  it('a quick report, then a rollout within the Progressing bound: one status write', async () => {
    const api = world();
    const step = controller(api, { pending: 10_000, progressing: 2000 });
    expect((await step()).writes).toEqual(children);
    deploymentReports(api, 0);
    api.pods = [runningPod];
    expect(await step(300)).toEqual({ result: { requeueAfterMs: 1700 }, writes: [] }); // Progressing: held
    deploymentReports(api, 1);
    expect(await step(300)).toEqual({ result: { requeueAfterMs: 1400 }, writes: [] }); // rolled out, no ready endpoint yet: still Progressing
    api.endpointSlices = [readySlice];
    expect(await step(300)).toEqual({ result: {}, writes: [statusWrite] });
    expect(status(api)?.phase).toBe('Running');
  });

  it('without a hold (the reconciler alone) every step is written: the cost the hold saves', async () => {
    const api = world();
    const step = controller(api);
    expect((await step()).writes).toEqual([...children, statusWrite]);
    expect(status(api)?.phase).toBe('Pending');
    api.pods = [runningPod];
    expect((await step()).writes).toEqual([statusWrite]);
    deploymentReports(api, 0);
    expect((await step()).writes).toEqual([statusWrite]);
    deploymentReports(api, 1);
    expect((await step()).writes).toEqual([statusWrite]);
    api.endpointSlices = [readySlice];
    expect((await step()).writes).toEqual([statusWrite]);
    expect(api.writes.filter((w) => w.verb === 'update')).toHaveLength(5);
  });

  it('no report within the bound: the requeue writes the in-between status; the next change is held again; a failure is written at once', async () => {
    const api = world();
    const step = controller(api, { pending: 10_000, progressing: 2000 });
    expect((await step()).result).toEqual({ requeueAfterMs: 10_000 });
    expect(await step(10_000)).toEqual({ result: {}, writes: [statusWrite] }); // the Deployment controller never reported: Pending, 10 s late
    expect(status(api)?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Pending' });
    deploymentReports(api, 0);
    expect(await step(100)).toEqual({ result: { requeueAfterMs: 2000 }, writes: [] }); // Progressing: a new hold
    api.pods = [failingPod];
    expect(await step(100)).toEqual({ result: {}, writes: [statusWrite] });
    expect(status(api)?.phase).toBe('Degraded');
  });

  it('a later rollout: its first Progressing is news, written at once; its next steps are held; Running at once', async () => {
    const api = world();
    const step = controller(api, STATUS_HOLD_MS);
    await step();
    deploymentReports(api, 1);
    api.pods = [runningPod];
    api.endpointSlices = [readySlice];
    expect((await step(100)).writes).toEqual([statusWrite]);
    expect(status(api)?.phase).toBe('Running');
    // spec.replicas 1 → 2: the Deployment is patched, its controller reports generation 2 rolling out.
    const ms = api.objects.get(msPath) as ModelService;
    api.objects.set(msPath, { ...ms, metadata: { ...ms.metadata, generation: 2 }, spec: { ...ms.spec, replicas: 2 } } as ModelService);
    const scaled = await step(100);
    expect(scaled.writes).toEqual([`patch ${depPath}`, statusWrite]);
    expect(status(api)).toMatchObject({ phase: 'Progressing', observedGeneration: 2, availableReplicas: 1 });
    const d = api.objects.get(depPath) as Deployment;
    const rollout = (available: number) => ({ ...d, metadata: { ...d.metadata, generation: 2 }, status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: available, availableReplicas: available } });
    api.objects.set(depPath, rollout(1));
    expect(await step(100)).toEqual({ result: { requeueAfterMs: 2000 }, writes: [] }); // the Deployment controller's report: a step, held
    api.objects.set(depPath, rollout(2));
    expect(await step(100)).toEqual({ result: {}, writes: [statusWrite] });
    expect(status(api)).toMatchObject({ phase: 'Running', observedGeneration: 2, availableReplicas: 2 });
  });

  it('a ModelService created without the finalizer (kubectl) gets it patched in first', async () => {
    const api = world(false);
    const first = await controller(api)();
    expect(first.writes[0]).toBe(`patch ${msPath}`);
    expect((api.objects.get(msPath) as ModelService).metadata.finalizers).toEqual([FINALIZER]);
  });
});
