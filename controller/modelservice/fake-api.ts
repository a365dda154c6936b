// An in-memory API server for the reconciler's unit tests (reconcile*.test.ts): it applies JSON
// merge patches as the real one does (RFC 7386: a key left out is kept, null removes it), guards
// writes by resourceVersion, and records every write as `verb path`. The pods and EndpointSlices
// the reader answers are the test's to set (one ModelService per fake). Test code only.
import type { KubeObject } from '../runtime/informer.ts';
import { paths, type KubeClient } from '../runtime/kube.ts';
import type { Reader } from './reader.ts';
import type { Deployment, EndpointSlice, ModelService, Pod } from './types.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const clone = <T>(v: T): T => structuredClone(v);

export interface FakeApi {
  objects: Map<string, KubeObject>;
  writes: Array<{ verb: 'create' | 'patch' | 'update'; path: string }>;
  pods: Pod[];
  endpointSlices: EndpointSlice[];
  client: KubeClient;
  reader: Reader;
}

export function fakeApi(): FakeApi {
  const objects = new Map<string, KubeObject>();
  const writes: FakeApi['writes'] = [];
  let rv = 1;
  const store = (path: string, obj: KubeObject) => {
    const next = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv), uid: obj.metadata.uid ?? `uid-${rv}` } };
    objects.set(path, next);
    return clone(next);
  };
  const guard = (path: string, body: { metadata?: { resourceVersion?: string } }) => {
    const cur = objects.get(path);
    if (!cur) throw new Error(`404 ${path}`);
    if (body.metadata?.resourceVersion && body.metadata.resourceVersion !== cur.metadata.resourceVersion) throw new Error('409 stale resourceVersion');
    return cur;
  };
  const client = {
    withSignal: () => client,
    getOrUndefined: async (path: string) => clone(objects.get(path)),
    list: async () => ({ items: [] }),
    create: async (collection: string, body: KubeObject) => {
      writes.push({ verb: 'create', path: collection });
      return store(`${collection}/${body.metadata.name}`, body);
    },
    mergePatch: async (path: string, body: { metadata?: { resourceVersion?: string } }) => {
      writes.push({ verb: 'patch', path });
      return store(path, mergePatch(guard(path, body), body) as KubeObject);
    },
    replace: async (path: string, body: KubeObject & { status: unknown }) => {
      writes.push({ verb: 'update', path });
      const key = path.replace(/\/status$/, '');
      return store(key, { ...guard(key, body), status: body.status } as KubeObject);
    },
  } as unknown as KubeClient;
  const api: FakeApi = {
    objects,
    writes,
    pods: [],
    endpointSlices: [],
    client,
    reader: {
      modelService: async (n, name) => clone(objects.get(paths.modelService(n, name))) as ModelService | undefined,
      deployment: async (n, name) => clone(objects.get(paths.deployment(n, name))) as Deployment | undefined,
      service: async (n, name) => clone(objects.get(paths.service(n, name))),
      pods: async () => clone(api.pods),
      endpointSlices: async () => clone(api.endpointSlices),
    },
  };
  return api;
}
