import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError, isAlreadyExists, isConflict, isNotFound } from './errors.ts';
import { KubeClient, resourceOf, type FetchLike } from './kube.ts';
import { Metrics } from './metrics.ts';
import type { TokenBucket } from './rate-limit.ts';
import { ServerClock } from './server-clock.ts';

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: true }],
    users: [{ name: 'u', token: 't0ken' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('KubeClient', () => {
  it('withSignal: a request in flight is aborted with the signal; the parent client is not', async () => {
    const fetch: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error), { once: true }));
    const parent = new KubeClient({ kc: kubeConfig(), fetch, timeoutMs: 60_000 });
    const ac = new AbortController();
    const pending = parent.withSignal(ac.signal).get('/api/v1/namespaces/a/pods/p');
    ac.abort(new Error('shutdown'));
    await expect(pending).rejects.toThrow('shutdown');
    await expect(parent.withSignal(ac.signal).get('/x')).rejects.toThrow('shutdown'); // already aborted: never sent
  });

  it('feeds the Date header of every answer, an error included, to the server clock', async () => {
    let local = Date.parse('2026-12-03T10:00:00.000Z');
    const serverClock = new ServerClock(() => local);
    const ahead = 120_000;
    const fetch: FetchLike = async (url) => {
      local += 10;
      const date = new Date(local + ahead).toUTCString();
      return { status: url.includes('missing') ? 404 : 200, headers: { get: (h) => (h === 'date' ? date : null) }, text: async () => '{}' };
    };
    const c = new KubeClient({ kc: kubeConfig(), fetch, serverClock });
    await c.get('/api/v1/namespaces/a/pods/p');
    expect(Math.abs(serverClock.now().getTime() - (local + ahead))).toBeLessThanOrEqual(1000);
    local += 3_000;
    await expect(c.get('/api/v1/namespaces/a/pods/missing')).rejects.toThrow(KubeApiError);
    expect(Math.abs(serverClock.now().getTime() - (local + ahead))).toBeLessThanOrEqual(1000);
  });

  it('every request has a deadline', async () => {
    const fetch: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error), { once: true }));
    const c = new KubeClient({ kc: kubeConfig(), fetch, timeoutMs: 50 });
    await expect(c.get('/api/v1/namespaces/a/pods/p')).rejects.toThrow(/timeout|aborted/i);
  });

  it('sends JSON with auth, merge-patch content type and fieldManager; counts and rate-limits writes', async () => {
    const calls: Array<{ url: string; method: string; headers: Record<string, string>; body?: string }> = [];
    const fetch: FetchLike = async (url, init) => {
      calls.push({ url, method: init.method, headers: init.headers, body: init.body });
      return { status: 200, headers: { get: () => null }, text: async () => '{"ok":true}' };
    };
    const metrics = new Metrics();
    let taken = 0;
    const limiter = { take: async () => void taken++ } as unknown as TokenBucket;
    const c = new KubeClient({ kc: kubeConfig(), fetch, metrics, limiter, fieldManager: 'fm' });
    await c.get('/api/v1/namespaces/a/services/s');
    await c.mergePatch('/apis/apps/v1/namespaces/a/deployments/d', { spec: { replicas: 2 } });
    await c.delete('/api/v1/namespaces/a/services/s', { propagationPolicy: 'Foreground', preconditions: { uid: 'u1' } });
    expect(taken).toBe(2);
    expect(calls[0]?.headers.authorization ?? calls[0]?.headers.Authorization).toBe('Bearer t0ken');
    expect(calls[1]).toMatchObject({ method: 'PATCH', url: 'https://127.0.0.1:6443/apis/apps/v1/namespaces/a/deployments/d?fieldManager=fm' });
    expect(calls[1]?.headers['content-type']).toBe('application/merge-patch+json');
    expect(JSON.parse(calls[2]?.body ?? '{}')).toMatchObject({ kind: 'DeleteOptions', propagationPolicy: 'Foreground', preconditions: { uid: 'u1' } });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/modeldock_kube_writes_total\{resource="deployments",verb="patch"\} 1/);
    expect(text).toMatch(/modeldock_kube_writes_total\{resource="services",verb="delete"\} 1/);
    expect(text).toMatch(/rest_client_requests_total\{code="200",method="GET",host="127.0.0.1:6443"\} 1/);
  });

  it('a read limiter, when given, is taken by reads (GET) only; writes take the write limiter', async () => {
    const fetch: FetchLike = async () => ({ status: 200, headers: { get: () => null }, text: async () => '{"items":[]}' });
    const taken = { reads: 0, writes: 0 };
    const readLimiter = { take: async () => void taken.reads++ } as unknown as TokenBucket;
    const limiter = { take: async () => void taken.writes++ } as unknown as TokenBucket;
    const c = new KubeClient({ kc: kubeConfig(), fetch, limiter, readLimiter });
    await c.get('/api/v1/namespaces/a/services/s');
    await c.list('/api/v1/namespaces/a/pods');
    await c.mergePatch('/apis/apps/v1/namespaces/a/deployments/d', { spec: { replicas: 2 } });
    expect(taken).toEqual({ reads: 2, writes: 1 });
  });

  it('throws KubeApiError with the parsed v1.Status', async () => {
    const fetch: FetchLike = async () => ({
      status: 409,
      headers: { get: () => null },
      text: async () => JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', message: 'exists', code: 409 }),
    });
    const c = new KubeClient({ kc: kubeConfig(), fetch });
    const err = await c.create('/api/v1/namespaces/a/services', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(isConflict(err)).toBe(true);
    expect(isAlreadyExists(err)).toBe(true);
    expect(isNotFound(err)).toBe(false);
    const missing = new KubeClient({ kc: kubeConfig(), fetch: async () => ({ status: 404, headers: { get: () => null }, text: async () => 'not json' }) });
    expect(await missing.getOrUndefined('/x')).toBeUndefined();
  });

  it.each([
    ['/apis/apps/v1/namespaces/a/deployments', 'POST', 'deployments'],
    ['/apis/apps/v1/namespaces/a/deployments/d', 'PATCH', 'deployments'],
    ['/apis/modeldock.io/v1alpha1/namespaces/a/modelservices/m/status', 'PUT', 'modelservices/status'],
    ['/api/v1/namespaces/a/services/s', 'DELETE', 'services'],
  ])('resourceOf(%s, %s) = %s', (path, method, expected) => {
    expect(resourceOf(path, method)).toBe(expected);
  });
});
