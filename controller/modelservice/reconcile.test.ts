import { describe, expect, it, vi } from 'vitest';
import { FINALIZER, PHASES, type Phase } from '../../schema/model-service.ts';
import type { Placement, Toleration } from '../../schema/placement.ts';
import type { KubeObject } from '../runtime/informer.ts';
import { paths } from '../runtime/kube.ts';
import { silentLogger } from '../runtime/log.ts';
import { fakeApi } from './fake-api.ts';
import { modelServiceReconciler, newsworthy } from './reconcile.ts';
import type { Deployment, ModelService } from './types.ts';

describe('newsworthy phase changes', () => {
  it('a first rollout that has not run yet is not news; Running, Degraded and Terminating are', () => {
    expect(newsworthy(undefined, 'Pending')).toBe(false);
    expect(newsworthy(undefined, 'Progressing')).toBe(false);
    expect(newsworthy('Pending', 'Progressing')).toBe(false);
    expect(newsworthy('Progressing', 'Pending')).toBe(false);
    for (const from of [undefined, 'Pending', 'Progressing'] as const) {
      for (const to of ['Running', 'Degraded', 'Terminating'] as const) expect(newsworthy(from, to), `${from} → ${to}`).toBe(true);
    }
  });

  it('falling back from Running, Degraded or Terminating is news, whatever it falls to', () => {
    for (const from of ['Running', 'Degraded', 'Terminating'] as const) {
      for (const to of PHASES as readonly Phase[]) if (to !== from) expect(newsworthy(from, to), `${from} → ${to}`).toBe(true);
    }
  });
});

const ns = 'lab';

/** An in-memory API server (fake-api.ts) holding the ModelService `lab/chat`, with `finalizers` if given. */
function withChat(finalizers?: string[]) {
  const api = fakeApi();
  api.objects.set(paths.modelService(ns, 'chat'), {
    apiVersion: 'modeldock.io/v1alpha1',
    kind: 'ModelService',
    metadata: { name: 'chat', namespace: ns, uid: 'ms-uid', resourceVersion: '1', ...(finalizers ? { finalizers } : {}) },
    spec: { image: 'example.invalid/m:1', replicas: 1, resources: { cpu: '1', memory: '1Gi' } },
  } as ModelService);
  return api;
}

/** One reconcile of `lab/chat`. */
const reconcileChat = (reconcile: ReturnType<typeof modelServiceReconciler>) =>
  reconcile({ namespace: ns, name: 'chat', key: `${ns}/chat` }, { log: silentLogger, fresh: false, signal: new AbortController().signal });

// The reconciler against an in-memory API server (fake-api.ts) that applies JSON merge patches as
// the real one does (RFC 7386: a key left out is kept, null removes it): a change of the
// operator's placement reaches the Deployment on the next reconcile, an unchanged one writes nothing.
describe('operator placement across reconciles (controller restarts with new settings)', () => {
  const realNode: Toleration = { key: 'modeldock.io/real-node', operator: 'Equal', value: 'true', effect: 'NoSchedule' };
  const onRealNode: Placement = { nodeSelector: { 'modeldock.io/real-node': 'true' }, tolerations: [realNode] };
  const onKwok: Placement = { nodeSelector: { type: 'kwok' }, affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists' }] } }] } } };

  it('added, changed and removed settings each reach the pod template exactly; unchanged ones write nothing; a foreign toleration stays', async () => {
    const api = withChat();
    const depPath = paths.deployment(ns, 'chat');
    const reconcileWith = async (placement: Placement | undefined) => {
      const before = api.writes.length;
      const reconcile = modelServiceReconciler({ client: api.client, cache: api.reader, events: { record: () => undefined }, placement, now: () => new Date(0) });
      await reconcileChat(reconcile);
      return api.writes.slice(before).filter((w) => w.path.startsWith(paths.deployments(ns))).length;
    };
    const pod = () => (api.objects.get(depPath) as Deployment).spec!.template!.spec!;
    const placementOf = () => ({ nodeSelector: pod().nodeSelector, tolerations: pod().tolerations, affinity: pod().affinity });
    const none = { nodeSelector: undefined, tolerations: undefined, affinity: undefined };

    expect(await reconcileWith(undefined)).toBe(1); // created, without placement
    expect(placementOf()).toEqual(none);
    expect(await reconcileWith({})).toBe(0);

    expect(await reconcileWith(onRealNode)).toBe(1); // added: one merge patch
    expect(placementOf()).toEqual({ ...none, ...onRealNode });
    expect(await reconcileWith(onRealNode)).toBe(0);

    expect(await reconcileWith(onKwok)).toBe(2); // a key and the tolerations removed: the removal patch, then createOrPatch's
    expect(placementOf()).toEqual({ ...none, ...onKwok });
    expect(await reconcileWith(onKwok)).toBe(0);

    // Someone else's toleration (not in ModelDock's annotation) is never removed.
    const foreign: Toleration = { key: 'example.com/theirs', operator: 'Exists' };
    await api.client.mergePatch(depPath, { spec: { template: { spec: { tolerations: [foreign] } } } });
    expect(await reconcileWith(undefined)).toBe(2); // all of ModelDock's placement dropped
    expect(placementOf()).toEqual({ ...none, tolerations: [foreign] });
    expect(api.objects.get(depPath)!.metadata.annotations).not.toHaveProperty('modeldock.io/placement');
    expect(await reconcileWith(undefined)).toBe(0);
  });
});

// A new ModelService's first reconcile: its two children are independent, so both creates are
// sent together; the reconcile ends only when both have answered (no write of the key left in
// flight), and its one Event names them in a fixed order whichever answered first.
describe('the children of a new ModelService', () => {
  const setup = () => {
    const api = withChat([FINALIZER]);
    // Every create waits until the test answers it.
    const answer = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
    const create = api.client.create.bind(api.client);
    api.client.create = ((collection: string, body: KubeObject) =>
      new Promise<void>((resolve, reject) => answer.set(collection, { resolve, reject })).then(() => create(collection, body))) as typeof api.client.create;
    const notes: string[] = [];
    const reconcile = modelServiceReconciler({ client: api.client, cache: api.reader, events: { record: (_o, _t, _r, note) => void notes.push(note) }, now: () => new Date(0) });
    let settled = false;
    const run = reconcileChat(reconcile).finally(() => {
      settled = true;
    });
    run.catch(() => undefined);
    const sent = async (n: number) => vi.waitFor(() => expect(answer.size).toBe(n));
    return { api, answer, notes, run, settled: () => settled, sent };
  };
  const tick = () => new Promise((r) => setImmediate(r));

  it('both creates are in flight together; the Event names the Deployment first even when the Service answers first', async () => {
    const t = setup();
    await t.sent(2);
    t.answer.get(paths.services(ns))!.resolve();
    await tick();
    expect(t.settled()).toBe(false);
    t.answer.get(paths.deployments(ns))!.resolve();
    await t.run;
    expect(t.notes).toEqual(['Created Deployment chat and Service chat']);
    expect(t.api.objects.has(paths.deployment(ns, 'chat')) && t.api.objects.has(paths.service(ns, 'chat'))).toBe(true);
  });

  it('a failed create fails the reconcile only once the other has answered, and no Event claims a child', async () => {
    const t = setup();
    await t.sent(2);
    t.answer.get(paths.deployments(ns))!.reject(new Error('500 deployments'));
    await tick();
    expect(t.settled()).toBe(false); // the Service's create is still in flight
    t.answer.get(paths.services(ns))!.resolve();
    await expect(t.run).rejects.toThrow('500 deployments');
    expect(t.notes).toEqual([]);
    expect(t.api.objects.has(paths.service(ns, 'chat'))).toBe(true); // the next reconcile finds it
  });
});
