// An in-memory Lease endpoint for unit tests of leader election and the Manager.
import { KubeApiError } from '../../controller/runtime/errors.ts';
import type { KubeClient } from '../../controller/runtime/kube.ts';

/** An in-memory Lease endpoint with resourceVersion semantics (409 on a stale PUT or a second create). */
export function fakeLeaseApi() {
  let lease: { metadata: { name: string; resourceVersion: string }; spec: Record<string, unknown> } | undefined;
  let rv = 0;
  const writes: Array<{ holder: unknown; transitions: unknown }> = [];
  const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  const client = {
    async get(path: string) {
      if (!lease) throw new KubeApiError('GET', path, 404, { reason: 'NotFound' });
      return clone(lease);
    },
    async create(path: string, body: { metadata: { name: string }; spec: Record<string, unknown> }) {
      if (lease) throw new KubeApiError('POST', path, 409, { reason: 'AlreadyExists' });
      lease = { metadata: { name: body.metadata.name, resourceVersion: String(++rv) }, spec: body.spec };
      writes.push({ holder: body.spec.holderIdentity, transitions: body.spec.leaseTransitions });
      return clone(lease);
    },
    async replace(path: string, body: { metadata: { resourceVersion?: string }; spec: Record<string, unknown> }) {
      if (!lease || body.metadata.resourceVersion !== lease.metadata.resourceVersion) throw new KubeApiError('PUT', path, 409, { reason: 'Conflict' });
      lease = { metadata: { ...lease.metadata, resourceVersion: String(++rv) }, spec: body.spec };
      writes.push({ holder: body.spec.holderIdentity, transitions: body.spec.leaseTransitions });
      return clone(lease);
    },
  };
  const reads = new Map<string, number>();
  /** The same endpoint for one caller, counting its reads (methods delegate late: a test may patch `client`). */
  const as = (who: string) =>
    ({
      get: (path: string) => {
        reads.set(who, (reads.get(who) ?? 0) + 1);
        return client.get(path);
      },
      create: (path: string, body: Parameters<typeof client.create>[1]) => client.create(path, body),
      replace: (path: string, body: Parameters<typeof client.replace>[1]) => client.replace(path, body),
    }) as unknown as KubeClient;
  return { client: client as unknown as KubeClient, as, reads: (who: string) => reads.get(who) ?? 0, writes, lease: () => lease };
}

