// The informer supervisor against a scripted fake API server on loopback (client behaviour
// only: restart on error, never after stop, synced only after a successful list, bookmarks,
// managedFields stripped, the staleness watchdog). Real-cluster behaviour is in test/integration.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { Informer, type KubeObject } from './informer.ts';
import { KubeClient } from './kube.ts';
import { createLogger, silentLogger } from './log.ts';

interface Script {
  list: (n: number) => { status: number; body?: unknown };
  /** Called for each watch request; write events with `send`, end with res.end(). */
  watch: (n: number, res: ServerResponse, url: URL) => void;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

async function fakeApi(script: Script) {
  const requests: URL[] = [];
  let lists = 0;
  let watches = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url);
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      script.watch(++watches, res, url);
      return;
    }
    const { status, body } = script.list(++lists);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? { kind: 'Status', code: status, reason: 'Forbidden' }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { kc, requests, counts: () => ({ lists, watches }) };
}

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'ns', resourceVersion: rv, uid: name, managedFields: [{ manager: 'x' }] } });
const list = (rv: string, ...items: unknown[]) => ({ status: 200, body: { metadata: { resourceVersion: rv }, items } });
const send = (res: ServerResponse, type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);

function informer(kc: KubeConfig, extra: Partial<ConstructorParameters<typeof Informer>[0]> = {}) {
  return new Informer<KubeObject>({
    name: 'pods',
    client: new KubeClient({ kc }),
    path: '/api/v1/namespaces/ns/pods',
    labelSelector: 'app.kubernetes.io/managed-by=modeldock',
    log: silentLogger,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    ...extra,
  });
}

describe('Informer', () => {
  it('is synced only after a successful list; restarts after a failed list with backoff', async () => {
    const api = await fakeApi({ list: (n) => (n === 1 ? { status: 403 } : list('10', pod('a', '5'))), watch: () => undefined });
    const inf = informer(api.kc);
    await inf.start();
    expect(inf.synced).toBe(false); // start() resolved although the list failed
    await inf.waitForSync();
    expect(inf.synced).toBe(true);
    expect(api.counts().lists).toBe(2);
    expect(inf.get('ns', 'a')?.metadata).not.toHaveProperty('managedFields');
    await inf.stop();
  });

  it('watches with the same selector, bookmarks and a server timeout; strips managedFields; emits add/update/delete', async () => {
    const seen: string[] = [];
    const api = await fakeApi({
      list: () => list('10', pod('a', '5')),
      watch: (n, res) => {
        if (n > 1) return;
        send(res, 'ADDED', pod('b', '11'));
        send(res, 'MODIFIED', pod('a', '12'));
        send(res, 'BOOKMARK', { metadata: { resourceVersion: '13' } });
        send(res, 'DELETED', pod('b', '14'));
      },
    });
    const inf = informer(api.kc);
    inf.addHandlers({ add: (o) => seen.push(`add ${o.metadata.name}`), update: (o) => seen.push(`update ${o.metadata.name}`), delete: (o) => seen.push(`delete ${o.metadata.name}`) });
    await inf.start();
    await waitUntil(() => seen.length === 4);
    expect(seen).toEqual(['add a', 'add b', 'update a', 'delete b']);
    const w = api.requests.find((u) => u.searchParams.get('watch') === 'true')!;
    expect(w.searchParams.get('labelSelector')).toBe('app.kubernetes.io/managed-by=modeldock');
    expect(w.searchParams.get('allowWatchBookmarks')).toBe('true');
    expect(Number(w.searchParams.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
    expect(w.searchParams.get('resourceVersion')).toBe('10');
    const l = api.requests.find((u) => u.searchParams.get('watch') !== 'true')!;
    expect(l.searchParams.get('labelSelector')).toBe('app.kubernetes.io/managed-by=modeldock');
    expect(inf.get('ns', 'a')?.metadata).not.toHaveProperty('managedFields');
    await inf.stop();
  });

  it('after a watch error it restarts with backoff and resumes from the last resourceVersion (no relist), and says it resumed', async () => {
    let first: ServerResponse | undefined;
    const logs: Array<{ msg: string; informer?: string }> = [];
    const api = await fakeApi({
      list: () => list('10', pod('a', '5')),
      watch: (n, res) => {
        if (n !== 1) return;
        send(res, 'MODIFIED', pod('a', '17'));
        first = res;
      },
    });
    const inf = informer(api.kc, { log: createLogger({ level: 'info', write: (l) => logs.push(JSON.parse(l) as { msg: string }) }) });
    await inf.start();
    // The connection is reset mid-stream once the informer has the event (not after a guessed delay).
    await waitUntil(() => inf.get('ns', 'a')?.metadata.resourceVersion === '17');
    first?.socket?.destroy();
    await waitUntil(() => api.counts().watches === 2);
    const watches = api.requests.filter((u) => u.searchParams.get('watch') === 'true');
    expect(watches[1]?.searchParams.get('resourceVersion')).toBe('17');
    expect(api.counts().lists).toBe(1);
    expect(inf.synced).toBe(true);
    await waitUntil(() => logs.some((l) => l.msg === 'informer resumed'));
    expect(logs.map((l) => l.msg)).toEqual(['informer synced', 'informer error; restarting', 'informer resumed']);
    await inf.stop();
  });

  it('never restarts after stop() (stop makes ListWatch emit an AbortError)', async () => {
    let closed = false;
    const api = await fakeApi({ list: () => list('10'), watch: (_n, res) => void res.on('close', () => (closed = true)) });
    const inf = informer(api.kc, { backoffBaseMs: 20, backoffMaxMs: 20 });
    await inf.start();
    await waitUntil(() => api.counts().watches === 1);
    await inf.stop();
    const before = api.counts();
    // The abort reached the server (so the client's watch has ended in its AbortError); a restart
    // would be scheduled at most backoffMaxMs after that error. No event can prove a timer that
    // was never set, so this one window is waited out — a multiple of the configured backoff,
    // not a guess at the machine's speed.
    await waitUntil(() => closed);
    await sleep(10 * 20);
    expect(api.counts()).toEqual(before);
  });

  it('the staleness watchdog rebuilds a silent informer with a full relist and reports vanished objects as deleted', async () => {
    const deleted: string[] = [];
    const api = await fakeApi({
      list: (n) => (n === 1 ? list('10', pod('a', '5'), pod('b', '6')) : list('20', pod('a', '5'))),
      watch: () => undefined, // established, then silent forever
    });
    const inf = informer(api.kc, { staleAfterMs: 1000 });
    inf.addHandlers({ delete: (o) => deleted.push(o.metadata.name) });
    await inf.start();
    await waitUntil(() => api.counts().lists === 2, 5000);
    await waitUntil(() => deleted.length === 1);
    expect(deleted).toEqual(['b']);
    expect(inf.list().map((o) => o.metadata.name)).toEqual(['a']);
    await inf.stop();
  });
});

async function waitUntil(cond: () => boolean, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}
