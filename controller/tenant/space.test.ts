import { describe, expect, it } from 'vitest';
import { LABELS } from '../../schema/model-service.ts';
import { KubeApiError } from '../runtime/errors.ts';
import type { Informer, KubeObject } from '../runtime/informer.ts';
import type { KubeClient } from '../runtime/kube.ts';
import { silentLogger } from '../runtime/log.ts';
import { tenantNamespaceObject } from './namespace.ts';
import { POLICY_NAMES } from './network-policy.ts';
import { TENANT_QUOTA_NAME } from './quota.ts';
import { ForeignNamespace, TenantSpaces, type TenantSpaceOptions } from './space.ts';

/** An API server of objects by path, recording writes; the informers read the same store (or lag, with `stale`). */
function world() {
  const objects = new Map<string, KubeObject>();
  const writes: string[] = [];
  let rv = 0;
  let computeQuotas = true;
  /** Objects the informers have not seen yet (until the next write of them). */
  const hidden = new Set<string>();
  const stored = (path: string, obj: KubeObject) => {
    // kube-controller-manager computes a quota's status (its hard limits) soon after it is written.
    const spec = (obj as { spec?: { hard?: Record<string, string> } }).spec;
    const status = path.includes('/resourcequotas/') && computeQuotas ? { status: { hard: spec?.hard } } : {};
    const o = { ...obj, ...status, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
    hidden.delete(path);
    objects.set(path, o);
    return o;
  };
  const client = {
    getOrUndefined: async (path: string) => objects.get(path),
    create: async (collection: string, obj: KubeObject) => {
      const path = `${collection}/${obj.metadata.name}`;
      if (objects.has(path)) throw new KubeApiError('POST', collection, 409, { reason: 'AlreadyExists' });
      writes.push(`create ${path}`);
      return stored(path, obj);
    },
    mergePatch: async (path: string, patch: KubeObject) => {
      writes.push(`patch ${path}`);
      const prev = objects.get(path)!;
      return stored(path, { ...prev, ...patch, metadata: { ...prev.metadata, ...patch.metadata } } as KubeObject);
    },
  } as unknown as KubeClient;
  const informer = (prefix: (ns: string) => string) =>
    ({
      get: (ns: string, name: string) => {
        const path = ns ? `${prefix(ns)}/${name}` : `/api/v1/namespaces/${name}`;
        return hidden.has(path) ? undefined : objects.get(path);
      },
      list: () => [...objects.entries()].filter(([p]) => /^\/api\/v1\/namespaces\/[^/]+$/.test(p) && !hidden.has(p)).map(([, o]) => o),
    }) as unknown as Informer<never>;
  const cache = {
    namespaces: informer(() => ''),
    quotas: informer((ns) => `/api/v1/namespaces/${ns}/resourcequotas`),
    policies: informer((ns) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`),
  };
  return { objects, writes, client, cache, hidden, holdQuotaStatus: () => (computeQuotas = false) };
}

function spaces(w: ReturnType<typeof world>, hard: Record<string, Record<string, number>>, o: Partial<TenantSpaceOptions> = {}) {
  const reads: string[] = [];
  let now = 0;
  const s = new TenantSpaces({
    prefix: 'md-',
    instance: undefined,
    maxReplicas: 16,
    network: { gatewayNamespaceLabels: { 'modeldock.io/gateway': 'true' }, gatewayPodLabels: { 'app.kubernetes.io/name': 'modeldock-gateway' }, ingressCidrs: [], egressAllow: [], egressDeny: [] },
    readHard: async (tenant) => {
      reads.push(tenant);
      return hard[tenant] ?? {};
    },
    cache: w.cache,
    log: silentLogger,
    now: () => now,
    ...o,
  });
  return { s, reads, advance: (ms: number) => (now += ms) };
}

const signal = new AbortController().signal;
const NS = '/api/v1/namespaces/md-acme';
const RQ = `${NS}/resourcequotas/${TENANT_QUOTA_NAME}`;
const NP = (name: string) => `/apis/networking.k8s.io/v1/namespaces/md-acme/networkpolicies/${name}`;

describe('TenantSpaces.ensure', () => {
  it('creates the namespace, its quota from the ledger and its policies; the second time writes nothing and trusts the quota read for 30 s', async () => {
    const w = world();
    const { s, reads, advance } = spaces(w, { acme: { cpu: 4000, memory: 8192, modelservices: 10 } });
    await s.ensure('acme', w.client, signal);
    expect(w.writes).toEqual([`create ${NS}`, `create ${RQ}`, ...Object.values(POLICY_NAMES).map((n) => `create ${NP(n)}`)]);
    expect(w.objects.get(NS)?.metadata.labels).toMatchObject({ [LABELS.tenant]: 'acme', 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect((w.objects.get(RQ) as unknown as { spec: { hard: Record<string, string> } }).spec.hard).toMatchObject({ 'requests.cpu': '4000m', pods: '160' });
    expect(w.objects.get(NP(POLICY_NAMES.egress))?.metadata.labels).toMatchObject({ [LABELS.tenant]: 'acme', [LABELS.managedBy]: 'modeldock' });
    expect(reads).toEqual(['acme']);

    w.writes.length = 0;
    advance(29_999);
    await s.ensure('acme', w.client, signal);
    expect(w.writes).toEqual([]);
    expect(reads).toEqual(['acme']);
    advance(1);
    await s.ensure('acme', w.client, signal);
    expect(reads).toEqual(['acme', 'acme']);
  });

  it('a new quota without a status yet (the API server would refuse every pod) holds the delivery, then fails it to be retried', async () => {
    const w = world();
    w.holdQuotaStatus();
    let now = 0;
    const { s } = spaces(w, { acme: { cpu: 1000 } }, { quotaStatusTimeoutMs: 250, now: () => (now += 50) });
    await expect(s.ensure('acme', w.client, signal)).rejects.toThrow('has no status yet');
    expect(w.writes).toContain(`create ${RQ}`);
  });

  it("a namespace under the tenant's name that is not its own, or one being deleted, is refused: nothing is written", async () => {
    for (const taken of [
      { metadata: { name: 'md-acme', labels: { team: 'x' } } },
      tenantNamespaceObject('md-acme', 'globex', undefined),
      { ...tenantNamespaceObject('md-acme', 'acme', undefined), metadata: { ...tenantNamespaceObject('md-acme', 'acme', undefined).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
    ]) {
      const w = world();
      w.objects.set(NS, taken);
      w.hidden.add(NS); // a namespace that is not ModelDock's is not in the label-selected cache
      const { s } = spaces(w, {});
      await expect(s.ensure('acme', w.client, signal)).rejects.toBeInstanceOf(ForeignNamespace);
      expect(w.writes).toEqual([]);
    }
  });

  it('a namespace created by someone else between our read and our create (AlreadyExists) is checked too: a foreign one is refused, never patched', async () => {
    const w = world();
    w.objects.set(NS, { metadata: { name: 'md-acme', labels: { team: 'x' } } });
    w.hidden.add(NS);
    let reads = 0;
    const racing = { ...w.client, getOrUndefined: async (path: string) => (++reads === 1 ? undefined : w.client.getOrUndefined(path)) } as unknown as KubeClient;
    await expect(spaces(w, {}).s.ensure('acme', racing, signal)).rejects.toBeInstanceOf(ForeignNamespace);
    expect(reads).toBe(2);
    expect(w.writes).toEqual([]);
  });

  it('an object the cache has not seen yet (AlreadyExists) is read live and patched only if it differs', async () => {
    const w = world();
    const { s } = spaces(w, { acme: { cpu: 1000 } });
    await s.ensure('acme', w.client, signal);
    w.writes.length = 0;
    for (const p of [NS, RQ, ...Object.values(POLICY_NAMES).map(NP)]) w.hidden.add(p);
    await spaces(w, { acme: { cpu: 2000 } }).s.ensure('acme', w.client, signal);
    expect(w.writes).toEqual([`patch ${RQ}`]);
  });
});

describe('TenantSpaces.sync', () => {
  it("re-reads every tenant's quota and corrects what changed; a namespace it does not name is left alone; one failure does not stop the others", async () => {
    const w = world();
    const hard: Record<string, Record<string, number>> = { acme: { cpu: 1000 }, globex: { cpu: 1000 } };
    const { s, reads } = spaces(w, hard);
    await s.ensure('acme', w.client, signal);
    await s.ensure('globex', w.client, signal);
    w.objects.set('/api/v1/namespaces/legacy', { metadata: { name: 'legacy', labels: { [LABELS.managedBy]: 'modeldock', [LABELS.tenant]: 'other' } } });
    w.writes.length = 0;
    reads.length = 0;
    hard.acme = { cpu: 3000 };
    let failGlobex = true;
    const failing = spaces(w, hard, {
      readHard: async (tenant) => {
        reads.push(tenant);
        if (tenant === 'globex' && failGlobex) throw new Error('ledger down');
        return hard[tenant] ?? {};
      },
    }).s;
    expect(await failing.sync(w.client, signal)).toEqual({ tenants: 3, failed: 1 });
    expect(reads.sort()).toEqual(['acme', 'globex']);
    expect(w.writes).toEqual([`patch ${RQ}`]);
    failGlobex = false;
    w.writes.length = 0;
    expect(await failing.sync(w.client, signal)).toEqual({ tenants: 3, failed: 0 });
    expect(w.writes).toEqual([]);
  });
});
