// The gateway in front of the real mock model, in-process on loopback, with a fixed route table
// (no cluster): credentials, routing, streaming, load balancing, deadlines, shutdown, metrics.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../controller/runtime/log.ts';
import { claimsFor, CREDENTIAL_HEADER, signCredential, type CredentialKey } from '../schema/gateway-credential.ts';
import type { Sleep } from '../mock/token-loop.ts';
import { createGate, slotState, startMock, waitFor, type TestMock } from '../test/support/mock-server.ts';
import { metricValue, parsePrometheus } from '../schema/prom-text.ts';
import { readOpenAiStream, readSse } from '../test/support/sse-client.ts';
import { ChangeNotice } from './change-notice.ts';
import { createGateway, type GatewaySettings } from './gateway.ts';
import type { RouteSource } from './proxy.ts';
import type { Endpoint, Route } from './routes.ts';

const KEY: CredentialKey = { id: 'k1', secret: 's'.repeat(32) };
const A1 = '01JABCDEFGHJKMNPQRSTVWXYZ0';
const A2 = '01JABCDEFGHJKMNPQRSTVWXYZ1';
const CHAT = { model: 'mock-model', messages: [{ role: 'user', content: 'hello' }], stream: true, max_tokens: 3 };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  // Every cleanup runs, even after one failed (a test's leftovers must not reach the next).
  const results = [];
  for (const c of cleanups.splice(0).reverse()) results.push(await c().then(() => undefined, (err: unknown) => err));
  const failed = results.find((r) => r !== undefined);
  if (failed) throw failed;
});

async function mock(name: string, options: Parameters<typeof startMock>[0] = {}): Promise<TestMock & { endpoint: Endpoint }> {
  const m = await startMock(options);
  cleanups.push(() => m.mock.close(0, 0));
  const { port } = new URL(m.url);
  return { ...m, endpoint: { address: '127.0.0.1', port: Number(port), pod: name } };
}

/** Decode steps wait for step(): one token each (the mock's sleep before every token). */
function stepper() {
  const waiters: Array<() => void> = [];
  const sleep: Sleep = (_ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const go = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        waiters.splice(waiters.indexOf(go), 1);
        reject(signal.reason as Error);
      };
      waiters.push(go);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  return { sleep, waiting: () => waiters.length, step: () => waiters.shift()?.() };
}

const DEFAULTS: GatewaySettings = {
  maxBodyBytes: 1 << 20,
  connectTimeoutMs: 2000,
  headersTimeoutMs: 10_000,
  idleTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  endpointWaitMs: 0,
  policy: 'least-load',
  staleMs: 60_000,
  scrapeIntervalMs: 500,
  loadMetrics: ['modeldock_mock_slots_busy', 'modeldock_mock_queue_depth'],
};

/** A route table that changes under the test and says so, as the informer's does. */
function changingRoutes(routes = new Map<string, Route>()) {
  const change = new ChangeNotice();
  const source: RouteSource = { table: () => routes, changed: (signal) => change.next(signal) };
  return {
    source,
    routes,
    waiting: () => change.waiting,
    set(admission: string, r: Route) {
      routes.set(admission, r);
      change.notify();
    },
  };
}

async function gateway(routes: Map<string, Route> | RouteSource, settings: Partial<GatewaySettings> = {}, keys = new Map([[KEY.id, KEY.secret]])) {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const source: RouteSource = routes instanceof Map ? { table: () => routes } : routes;
  const gw = createGateway({ settings: { ...DEFAULTS, ...settings }, routes: source, keys: { keys }, log, ready: () => true });
  const { url, metricsUrl } = await gw.listen({ port: 0, metricsPort: 0, host: '127.0.0.1' });
  cleanups.push(() => gw.close(0));
  const requestLines = () => lines.filter((l) => l.msg === 'request');
  return {
    gw,
    url,
    metricsUrl,
    lines,
    requestLines,
    /** POST with a credential for (tenant, admission) unless `credential` says otherwise. */
    post: async (o: { path?: string; body?: unknown; tenant?: string; admission?: string; requestId?: string; credential?: string | null; signal?: AbortSignal } = {}) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
      const credential = o.credential === undefined ? await credentialFor(o.tenant ?? 'acme', o.admission ?? A1, o.requestId ?? 'req-1') : o.credential;
      if (credential !== null) headers[CREDENTIAL_HEADER] = credential;
      return fetch(`${url}${o.path ?? '/v1/chat/completions'}`, { method: 'POST', headers, body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body ?? CHAT), signal: o.signal });
    },
    scrape: async () => parsePrometheus(await (await fetch(`${metricsUrl}/metrics`)).text()),
  };
}

const credentialFor = (tenant: string, admission: string, requestId: string, nowMs = Date.now(), key = KEY) => signCredential(key, claimsFor({ tenant, admission, requestId, nowMs }));
const route = (...endpoints: Endpoint[]): Route => ({ tenant: 'acme', namespace: 'md-acme', endpoints });
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe('gateway: credentials and routing', () => {
  it('401 without a credential and with a bad one; the reason only in the log and the metrics', async () => {
    const a = await mock('a');
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const missing = await g.post({ credential: null });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: { code: 'unauthorized', type: 'authentication_error', message: 'missing or invalid gateway credential', param: null } });
    const foreign = await g.post({ credential: await credentialFor('acme', A1, 'r', Date.now(), { id: 'k1', secret: 'x'.repeat(32) }) });
    expect(foreign.status).toBe(401);
    expect(await errorCode(foreign)).toBe('unauthorized');
    const expired = await g.post({ credential: await credentialFor('acme', A1, 'r', Date.now() - 10 * 60_000) });
    expect(expired.status).toBe(401);
    const s = await g.scrape();
    for (const reason of ['missing', 'bad_signature', 'expired']) expect(metricValue(s, 'modeldock_gateway_credential_rejections_total', { reason }), reason).toBe(1);
    expect(g.requestLines().map((l) => [l.status, l.outcome, l.reason])).toEqual([
      [401, 'rejected', 'missing'],
      [401, 'rejected', 'bad_signature'],
      [401, 'rejected', 'expired'],
    ]);
    expect((await a.scrape()).filter((x) => x.name === 'modeldock_mock_requests_total')).toEqual([]); // nothing reached the model
  });

  it('404 for another tenant\'s admission; 503 + Retry-After for an unknown one and for a known one without a ready endpoint', async () => {
    const a = await mock('a');
    const g = await gateway(new Map([[A1, route(a.endpoint)], [A2, route()]]));
    const other = await g.post({ tenant: 'globex', admission: A1 });
    expect([other.status, await errorCode(other)]).toEqual([404, 'not_found']);
    const unknown = await g.post({ admission: '01JZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect([unknown.status, unknown.headers.get('retry-after'), await errorCode(unknown)]).toEqual([503, '1', 'no_ready_endpoint']);
    const none = await g.post({ admission: A2 });
    expect([none.status, none.headers.get('retry-after'), await errorCode(none)]).toEqual([503, '1', 'no_ready_endpoint']);
    const s = await g.scrape();
    expect(metricValue(s, 'modeldock_gateway_requests_total', { tenant: 'globex', admission: '', code: '404' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_requests_total', { tenant: 'acme', admission: '', code: '503' })).toBe(1); // no route: no series of its own
    expect(metricValue(s, 'modeldock_gateway_requests_total', { tenant: 'acme', admission: A2, code: '503' })).toBe(1);
  });

  it('404 for another path, 405 for another method, 413 for a body over the limit', async () => {
    const a = await mock('a');
    const g = await gateway(new Map([[A1, route(a.endpoint)]]), { maxBodyBytes: 100 });
    expect((await g.post({ path: '/v1/embeddings' })).status).toBe(404);
    expect((await fetch(`${g.url}/v1/completions`)).status).toBe(405);
    const big = await g.post({ body: { ...CHAT, messages: [{ role: 'user', content: 'x'.repeat(200) }] } });
    expect([big.status, await errorCode(big)]).toEqual([413, 'body_too_large']);
  });

  it('forwards the body byte for byte with content-type, accept and the credential\'s request id, never the credential', async () => {
    const seen: Array<{ headers: IncomingHttpHeaders; body: string; url: string }> = [];
    const upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), url: req.url ?? '' });
        res.writeHead(201, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-secret-upstream': 'leak' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => upstream.close(r)));
    const port = (upstream.address() as AddressInfo).port;
    const g = await gateway(new Map([[A1, route({ address: '127.0.0.1', port, pod: 'up' })]]));
    const body = '{ "model" : "m",\n "prompt": "é" }';
    const res = await g.post({ path: '/v1/completions?x=1', body, requestId: 'edge-req-7' });
    expect([res.status, await res.text()]).toEqual([201, '{"ok":true}']);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toBe('edge-req-7');
    expect(res.headers.get('x-secret-upstream')).toBeNull();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toBe(body);
    expect(seen[0]!.url).toBe('/v1/completions?x=1');
    expect(seen[0]!.headers).toMatchObject({ 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'edge-req-7' });
    expect(seen[0]!.headers[CREDENTIAL_HEADER]).toBeUndefined();
  });
});

describe('gateway: streaming', () => {
  it('streams each token as the model writes it (nothing buffered), then logs and counts the request', async () => {
    const steps = stepper();
    const a = await mock('a', { sleep: steps.sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const res = await g.post({ requestId: 'edge-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = readSse(res.body!);
    const next = async () => JSON.parse((await events.next()).value!.data) as { choices: Array<{ delta: { content?: string } }> };
    expect((await next()).choices[0]!.delta).toEqual({ role: 'assistant', content: '' }); // before any token was made
    for (let i = 0; i < 3; i++) {
      await waitFor(() => steps.waiting() === 1, 'the model waits for its next token');
      // A model takes time per token; on the gateway's millisecond clock three tokens in one
      // millisecond would have no rate (seen once in CI), so each step comes ≥ 2 ms apart.
      await new Promise((r) => setTimeout(r, 2));
      steps.step();
      expect((await next()).choices[0]!.delta.content, `token ${i + 1} arrives before the next is made`).toBeTruthy();
    }
    const rest: string[] = [];
    for await (const e of events) rest.push(e.data);
    expect(rest.at(-1)).toBe('[DONE]');

    await waitFor(() => g.requestLines().length === 1, 'the request line');
    expect(g.requestLines()[0]).toMatchObject({ level: 'info', requestId: 'edge-1', tenant: 'acme', admission: A1, pod: 'a', status: 200, tokens: 3, outcome: 'completed' });
    expect(g.requestLines()[0]!.ttftMs).toEqual(expect.any(Number));
    expect(g.requestLines()[0]!.durationMs).toEqual(expect.any(Number));
    const s = await g.scrape();
    const labels = { tenant: 'acme', admission: A1 };
    expect(metricValue(s, 'modeldock_gateway_requests_total', { ...labels, code: '200' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_tokens_total', labels)).toBe(3);
    expect(metricValue(s, 'modeldock_gateway_time_to_first_token_seconds_count', labels)).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_tokens_per_second_count', labels)).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_inflight', labels)).toBe(0);
    expect(metricValue(s, 'modeldock_gateway_picks_total', { source: 'inflight' })).toBe(1);
  });

  it('a client that leaves frees the model\'s slot at once', async () => {
    const gate = createGate();
    const a = await mock('a', { sleep: gate.sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const client = new AbortController();
    const res = await g.post({ signal: client.signal });
    expect(res.status).toBe(200);
    await waitFor(async () => slotState(await a.scrape()).busy === 1, 'the model holds a slot');
    client.abort();
    await waitFor(async () => slotState(await a.scrape()).busy === 0, 'the slot is free again', 1000);
    await waitFor(() => g.requestLines().length === 1, 'the request line');
    expect(g.requestLines()[0]).toMatchObject({ status: 200, outcome: 'client_closed', tokens: 0 });
    expect(g.gw.book.inflight(`127.0.0.1:${a.endpoint.port}`)).toBe(0);
  });

  it('a non-streamed answer passes whole', async () => {
    const a = await mock('a');
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const res = await g.post({ body: { ...CHAT, stream: false } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
  });

  it('the model\'s own refusal passes through with its status and Retry-After', async () => {
    const a = await mock('a', { slots: 1, queueLimit: 0, sleep: createGate().sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const first = await g.post();
    expect(first.status).toBe(200);
    const second = await g.post();
    expect([second.status, second.headers.get('retry-after')]).toEqual([429, '1']);
    expect(g.requestLines().at(-1)).toMatchObject({ status: 429, outcome: 'completed' });
    await first.body!.cancel();
  });
});

describe('gateway: balancing', () => {
  it('least-load sends to the idle pod when the other is busy (seen in its /metrics)', async () => {
    const gateA = createGate();
    const a = await mock('a', { sleep: gateA.sleep });
    const b = await mock('b');
    const g = await gateway(new Map([[A1, route(a.endpoint, b.endpoint)]]));
    // A is busy with a request that did not come through this gateway (another replica's).
    const direct = new AbortController();
    const held = await a.post('/v1/chat/completions', CHAT, { signal: direct.signal });
    expect(held.status).toBe(200);
    await g.gw.scraper.scrapeOnce();
    for (let i = 0; i < 3; i++) expect((await readOpenAiStream((await g.post()).body!)).done).toBe(true);
    expect(g.requestLines().map((l) => l.pod)).toEqual(['b', 'b', 'b']);
    expect(metricValue(await g.scrape(), 'modeldock_gateway_picks_total', { source: 'metrics' })).toBe(3);
    direct.abort();
  });

  it('round-robin takes turns whatever the load', async () => {
    const a = await mock('a');
    const b = await mock('b');
    const g = await gateway(new Map([[A1, route(a.endpoint, b.endpoint)]]), { policy: 'round-robin' });
    for (let i = 0; i < 4; i++) await (await g.post()).text();
    expect(g.requestLines().map((l) => l.pod)).toEqual(['a', 'b', 'a', 'b']);
  });

  it('a pod that refuses connections is skipped for the next one; none reachable → 502', async () => {
    const dead = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const deadEndpoint = { address: '127.0.0.1', port: dead, pod: 'dead' };
    const b = await mock('b');
    const g = await gateway(new Map([[A1, route(deadEndpoint, b.endpoint)], [A2, route(deadEndpoint)]]), { policy: 'round-robin' });
    const ok = await g.post();
    expect((await readOpenAiStream(ok.body!)).done).toBe(true);
    expect(g.requestLines()[0]).toMatchObject({ pod: 'b', outcome: 'completed' });
    const none = await g.post({ admission: A2 });
    expect([none.status, await errorCode(none)]).toEqual([502, 'upstream_unreachable']);
    expect(g.requestLines()[1]).toMatchObject({ status: 502, outcome: 'upstream_error' });
    expect(metricValue(await g.scrape(), 'modeldock_gateway_upstream_connect_errors_total')).toBe(2);
  });
});

describe('gateway: waiting for a ready endpoint', () => {
  it('a route that gains a ready endpoint during the wait is served, as is an admission whose route appears', async () => {
    const a = await mock('a');
    const t = changingRoutes(new Map([[A1, route()]]));
    const g = await gateway(t.source, { endpointWaitMs: 5000 });
    const pending = [g.post(), g.post({ admission: A2, requestId: 'req-2' })];
    await waitFor(() => t.waiting() === 2, 'both requests wait');
    await new Promise((r) => setTimeout(r, 200));
    t.set(A1, route(a.endpoint));
    t.set(A2, route(a.endpoint));
    for (const res of await Promise.all(pending)) {
      expect(res.status).toBe(200);
      expect((await readOpenAiStream(res.body!)).done).toBe(true);
    }
    await waitFor(() => g.requestLines().length === 2, 'the request lines');
    for (const l of g.requestLines()) {
      expect(l).toMatchObject({ status: 200, outcome: 'completed', pod: 'a' });
      expect(l.endpointWaitMs).toBeGreaterThanOrEqual(190);
      expect(l.endpointWaitMs).toBeLessThan(5000);
    }
    expect(t.waiting()).toBe(0);
  });

  it('one that never gets a ready endpoint is 503 + Retry-After after ENDPOINT_WAIT_MS, an unknown one too', async () => {
    const g = await gateway(changingRoutes(new Map([[A1, route()]])).source, { endpointWaitMs: 150 });
    for (const admission of [A1, A2]) {
      const started = Date.now();
      const res = await g.post({ admission });
      expect([res.status, res.headers.get('retry-after'), await errorCode(res)]).toEqual([503, '1', 'no_ready_endpoint']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(145);
    }
    expect(g.requestLines().map((l) => [l.admission, l.status, l.outcome, (l.endpointWaitMs as number) >= 145])).toEqual([
      [A1, 503, 'rejected', true],
      [A2, 503, 'rejected', true],
    ]);
  });

  it('a table that cannot say when it changed is re-read until the endpoint appears', async () => {
    const a = await mock('a');
    const routes = new Map([[A1, route()]]);
    const g = await gateway(routes, { endpointWaitMs: 5000 });
    const pending = g.post();
    await new Promise((r) => setTimeout(r, 100));
    routes.set(A1, route(a.endpoint));
    const res = await pending;
    expect(res.status).toBe(200);
    await res.text();
  });

  it('another tenant\'s admission is 404 with no wait', async () => {
    const a = await mock('a');
    const g = await gateway(changingRoutes(new Map([[A1, route(a.endpoint)], [A2, route()]])).source, { endpointWaitMs: 5000 });
    const started = Date.now();
    for (const admission of [A1, A2]) expect((await g.post({ tenant: 'globex', admission })).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(g.requestLines().map((l) => [l.status, l.endpointWaitMs])).toEqual([
      [404, undefined],
      [404, undefined],
    ]);
  });

  it('a client that leaves mid-wait ends it at once (499, client_closed)', async () => {
    const t = changingRoutes(new Map([[A1, route()]]));
    const g = await gateway(t.source, { endpointWaitMs: 10_000 });
    const client = new AbortController();
    const pending = g.post({ signal: client.signal }).catch((err: unknown) => err);
    await waitFor(() => t.waiting() === 1, 'the request waits');
    client.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitFor(() => g.requestLines().length === 1, 'the request line', 1000);
    expect(g.requestLines()[0]).toMatchObject({ status: 499, outcome: 'client_closed', admission: A1 });
    expect(g.requestLines()[0]!.endpointWaitMs).toBeLessThan(1000);
    expect(t.waiting()).toBe(0);
    expect(metricValue(await g.scrape(), 'modeldock_gateway_requests_total', { tenant: 'acme', admission: A1, code: '499' })).toBe(1);
  });

  it('the request deadline ends the wait (503: no endpoint was ever there)', async () => {
    const t = changingRoutes(new Map([[A1, route()]]));
    const g = await gateway(t.source, { endpointWaitMs: 10_000, requestTimeoutMs: 100 });
    const started = Date.now();
    const res = await g.post();
    expect([res.status, await errorCode(res)]).toEqual([503, 'no_ready_endpoint']);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(t.waiting()).toBe(0);
  });
});

describe('gateway: endpoint load gauge', () => {
  const loadOf = async (g: Awaited<ReturnType<typeof gateway>>, pod: string) =>
    (await g.scrape()).filter((x) => x.name === 'modeldock_gateway_endpoint_load' && x.labels.pod === pod).map((x) => [x.labels, x.value]);

  for (const policy of ['least-load', 'round-robin'] as const) {
    it(`${policy}: a pod scraped at busy 2 shows 2; the gateway's own request adds 1 until the pod counts it`, async () => {
      const a = await mock('a', { slots: 3, sleep: createGate().sleep });
      const routes = new Map([[A1, route(a.endpoint)]]);
      const g = await gateway(routes, { policy });
      const labels = { tenant: 'acme', admission: A1, pod: 'a', address: '127.0.0.1' };
      expect(await loadOf(g, 'a')).toEqual([[labels, 0]]);

      const direct = new AbortController();
      await Promise.all([1, 2].map(() => a.post('/v1/chat/completions', CHAT, { signal: direct.signal })));
      await waitFor(async () => slotState(await a.scrape()).busy === 2, 'two slots busy');
      await g.gw.scraper.scrapeOnce();
      expect(await loadOf(g, 'a')).toEqual([[labels, 2]]);

      const client = new AbortController();
      const res = await g.post({ signal: client.signal });
      expect(res.status).toBe(200);
      await waitFor(async () => slotState(await a.scrape()).busy === 3, 'the gateway\'s request holds a slot');
      expect(await loadOf(g, 'a')).toEqual([[labels, 3]]);
      await g.gw.scraper.scrapeOnce();
      expect(await loadOf(g, 'a'), 'the pod counts it now: not twice').toEqual([[labels, 3]]);

      client.abort();
      await waitFor(() => g.requestLines().length === 1, 'the request ended');
      expect(await loadOf(g, 'a'), 'until the next scrape, the request that ended is taken off').toEqual([[labels, 2]]);
      direct.abort();
    });
  }

  it('an endpoint whose route is gone has no series', async () => {
    const a = await mock('a');
    const b = await mock('b');
    const routes = new Map([[A1, route(a.endpoint)], [A2, route(b.endpoint)]]);
    const g = await gateway(routes);
    expect((await loadOf(g, 'a')).length + (await loadOf(g, 'b')).length).toBe(2);
    routes.delete(A2);
    expect(await loadOf(g, 'a')).toHaveLength(1);
    expect(await loadOf(g, 'b')).toEqual([]);
  });
});

describe('gateway: deadlines', () => {
  it('504 when the model sends no headers in time (queued behind a busy slot), and the queued request leaves the model', async () => {
    const a = await mock('a', { slots: 1, sleep: createGate().sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]), { headersTimeoutMs: 100 });
    const first = await g.post();
    expect(first.status).toBe(200);
    const second = await g.post();
    expect([second.status, await errorCode(second)]).toEqual([504, 'upstream_timeout']);
    await waitFor(async () => slotState(await a.scrape()).queued === 0, 'the queue is empty again', 1000);
    expect(g.requestLines().at(-1)).toMatchObject({ status: 504, outcome: 'timeout' });
    await first.body!.cancel();
  });

  it('a stream silent for longer than the idle deadline is ended, and the model\'s slot freed', async () => {
    const a = await mock('a', { sleep: createGate().sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]), { idleTimeoutMs: 100 });
    const res = await g.post();
    expect(res.status).toBe(200);
    const stream = await readOpenAiStream(res.body!); // returns when the gateway ends it
    expect(stream.done).toBe(false);
    await waitFor(async () => slotState(await a.scrape()).busy === 0, 'the slot is free again', 1000);
    expect(g.requestLines()[0]).toMatchObject({ status: 200, outcome: 'timeout' });
  });

  it('the total deadline ends a stream that keeps going', async () => {
    const a = await mock('a', { tokenDelayMs: 5, sleep: undefined });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]), { requestTimeoutMs: 150 });
    const res = await g.post({ body: { ...CHAT, max_tokens: 100_000 } });
    const stream = await readOpenAiStream(res.body!);
    expect(stream.done).toBe(false);
    expect(g.requestLines()[0]).toMatchObject({ outcome: 'timeout' });
    await waitFor(async () => slotState(await a.scrape()).busy === 0, 'the slot is free again', 1000);
  });
});

describe('gateway: health and shutdown', () => {
  it('/healthz always; /readyz once there is a key (and the routes are synced)', async () => {
    const keys = new Map<string, string>();
    const g = await gateway(new Map(), {}, keys);
    expect((await fetch(`${g.metricsUrl}/healthz`)).status).toBe(200);
    const unready = await fetch(`${g.metricsUrl}/readyz`);
    expect([unready.status, await unready.json()]).toEqual([503, { status: 'not_ready', checks: { keys: false, routes: true, draining: false } }]);
    keys.set(KEY.id, KEY.secret);
    expect((await fetch(`${g.metricsUrl}/readyz`)).status).toBe(200);
  });

  it('close lets a stream in flight finish within the grace period, and refuses new requests', async () => {
    const steps = stepper();
    const a = await mock('a', { sleep: steps.sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const res = await g.post();
    const body = readOpenAiStream(res.body!);
    await waitFor(() => steps.waiting() === 1, 'the stream is under way');
    const closed = g.gw.close(10_000);
    await waitFor(() => g.lines.some((l) => l.msg === 'shutting down'), 'draining');
    expect((await fetch(`${g.metricsUrl}/readyz`)).status).toBe(503);
    for (let i = 0; i < 3; i++) {
      await waitFor(() => steps.waiting() === 1, 'the next token');
      steps.step();
    }
    expect((await body).done).toBe(true);
    await closed;
    expect(g.requestLines()[0]).toMatchObject({ outcome: 'completed' });
  });

  it('close cuts what is still in flight when the grace period is over', async () => {
    const a = await mock('a', { sleep: createGate().sleep });
    const g = await gateway(new Map([[A1, route(a.endpoint)]]));
    const res = await g.post();
    const body = readOpenAiStream(res.body!).catch(() => ({ done: false }));
    await waitFor(async () => slotState(await a.scrape()).busy === 1, 'the model holds a slot');
    await g.gw.close(50);
    expect((await body).done).toBe(false);
    expect(g.requestLines()[0]).toMatchObject({ outcome: 'client_closed' });
    await waitFor(async () => slotState(await a.scrape()).busy === 0, 'the slot is free again', 1000);
  });
});
