// The inference routes in-process: GET /v1/models and POST /v1/models/{id}/(chat/)completions
// against a fake ledger (test-ledger.ts) and a fake gateway (the injected fetch). What is checked
// before the gateway is called (key, rate limit, body) and beside the call (owner, state: a refusal aborts it), what the gateway gets (the
// credential, never the tenant's key, the body byte for byte), and how its answer comes back
// (streamed chunk by chunk, the gateway's own errors translated, the model's passed on).
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_HEADER, verifyCredential } from '../schema/gateway-credential.ts';
import { createApp } from './app.ts';
import { parseKeyRing } from './auth/keys.ts';
import { parseConfig, type Env } from './config.ts';
import type { Fetch } from './inference/forward.ts';
import type { LogLine } from './middleware/log.ts';
import type { RateLimiter } from './rate-limit.ts';
import { fakeLedger, type FakeReservation } from './test-ledger.ts';
import { createPlacer } from '../ledger/placement.ts';

const KEY = 'acme-key-0123456789abcdef';
const GLOBEX_KEY = 'globex-key-0123456789abcdef';
const SECRET = 'gateway-secret-0123456789abcdef-0123456789';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const READY = '01JD5Y3QW5ZC8Y1G1M5N8D4X7B';
const OLDER_READY = '01JD5Y3QW5ZC8Y1G1M5N8D4X7A';
const GLOBEX_READY = '01JD5Y3QW5ZC8Y1G1M5N8D4X7C';
const MISSING = '01JD5Y3QW5ZC8Y1G1M5N8D4X7Z';
const GATEWAY_ENV = { GATEWAY_URL: 'http://gateway.test:8080/', GATEWAY_CREDENTIAL_KEY: JSON.stringify({ id: 'k1', secret: SECRET }) };

const ledgerRows = (): FakeReservation[] => [
  { id: OLDER_READY, tenant: 'acme', name: 'older', state: 'ready', boundIn: 'md-acme', createdAt: '2026-02-01 10:00:00.000' },
  { id: READY, tenant: 'acme', name: 'chat', state: 'ready', boundIn: 'md-acme', createdAt: '2026-02-02 10:00:00.500' },
  { id: GLOBEX_READY, tenant: 'globex', name: 'theirs', state: 'ready', boundIn: 'md-globex' },
  ...(['admitted', 'delivered', 'deleting', 'releasing', 'released', 'conflict'] as const).map((state, i) => ({
    id: `01JD5Y3QW5ZC8Y1G1M5N8D4X${i}0`,
    tenant: 'acme',
    name: state,
    state,
    ...(state === 'admitted' ? {} : { boundIn: 'md-acme' }),
  })),
];

interface GatewayCall {
  url: string;
  headers: Headers;
  body: Uint8Array;
  signal: AbortSignal;
}

/** A gateway that records each call and answers with `respond`. */
function fakeGateway(respond: (call: GatewayCall) => Promise<Response> | Response = () => Response.json({ ok: true })) {
  const calls: GatewayCall[] = [];
  const fetch: Fetch = async (url, init) => {
    const call = { url, headers: new Headers(init.headers), body: new Uint8Array(init.body as ArrayBuffer), signal: init.signal as AbortSignal };
    calls.push(call);
    return respond(call);
  };
  return { fetch, calls };
}

/**
 * A refused call: the forward, started beside the ledger read (inference/when-allowed.ts), was
 * aborted (at most one call per request, and it answered nobody).
 */
function expectAllAborted(calls: readonly GatewayCall[], requests = 1): void {
  expect(calls.length).toBeLessThanOrEqual(requests);
  expect(calls.every((c) => c.signal.aborted)).toBe(true);
}

const allow: RateLimiter = { limit: () => Promise.resolve({ success: true }) };

function setup(o: { gateway?: ReturnType<typeof fakeGateway>; env?: Env; headersTimeoutMs?: number; tenantLimiter?: RateLimiter } = {}) {
  const gateway = o.gateway ?? fakeGateway();
  const ledger = fakeLedger(ledgerRows());
  const parsed = parseConfig({ DATABASE_URL: 'http://u:p@127.0.0.1:1', ALLOWED_IMAGE_REGISTRIES: '*', MAX_BODY_BYTES: '2048', ...(o.env ?? GATEWAY_ENV) });
  const config = o.headersTimeoutMs && parsed.gateway ? { ...parsed, gateway: { ...parsed.gateway, headersTimeoutMs: o.headersTimeoutMs } } : parsed;
  const logs: LogLine[] = [];
  const app = createApp({
    config,
    deps: () => ({ db: ledger.db, clock: () => new Date(NOW), newId: () => 'x', placer: createPlacer() }),
    keyRing: () => parseKeyRing(JSON.stringify({ acme: KEY, globex: GLOBEX_KEY })),
    rateLimiters: () => ({ ip: allow, tenant: o.tenantLimiter ?? allow }),
    gatewayFetch: gateway.fetch,
    log: (l) => logs.push(l),
  });
  const post = (path: string, body: BodyInit = '{"messages":[{"role":"user","content":"hi"}],"stream":true}', headers: Record<string, string> = {}, signal?: AbortSignal) =>
    app.request(path, { method: 'POST', body, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', ...headers }, ...(signal ? { signal } : {}) });
  const chat = (id = READY, body?: BodyInit, headers?: Record<string, string>, signal?: AbortSignal) => post(`/v1/models/${id}/chat/completions`, body, headers, signal);
  return { app, gateway, ledger, logs, post, chat };
}

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string; details?: unknown } }).error;
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);
/** Fails instead of hanging when `p` does not settle within `ms`. */
const within = <T>(ms: number, p: T | Promise<T>, what: string): Promise<T> =>
  Promise.race([Promise.resolve(p), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('POST /v1/models/{id}/…: refused (nothing of the gateway reaches the client)', () => {
  it('401 without a key, with a bad key: the gateway is not called and nothing is read', async () => {
    const s = setup();
    for (const auth of [{}, { Authorization: 'Bearer nobody-has-this-key-01234' }] as Record<string, string>[]) {
      const res = await s.app.request(`/v1/models/${READY}/chat/completions`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json', ...auth } });
      expect(res.status).toBe(401);
      expect((await errorOf(res)).code).toBe('unauthorized');
    }
    expect(s.gateway.calls).toHaveLength(0);
    expect(s.ledger.statements).toHaveLength(0);
  });

  it("404 for another tenant's admission, exactly as for a missing one", async () => {
    const s = setup();
    const theirs = await s.chat(GLOBEX_READY);
    const missing = await s.chat(MISSING);
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await theirs.json()).toEqual(await missing.json());
    expectAllAborted(s.gateway.calls, 2);
  });

  it.each(['admitted', 'delivered', 'deleting', 'releasing', 'released', 'conflict'])('409 model_not_ready while %s, the state in details', async (state) => {
    const s = setup();
    const id = s.ledger.reservations.find((r) => r.tenant === 'acme' && r.state === state)!.id;
    const res = await s.chat(id);
    expect(res.status).toBe(409);
    expect(await errorOf(res)).toMatchObject({ code: 'model_not_ready', details: { state } });
    expectAllAborted(s.gateway.calls);
  });

  it('the state is read on every request: refused at once after a DELETE moved the admission on', async () => {
    const s = setup();
    expect((await s.chat()).status).toBe(200);
    s.ledger.reservations.find((r) => r.id === READY)!.state = 'deleting';
    const res = await s.chat();
    expect(res.status).toBe(409);
    expect(await errorOf(res)).toMatchObject({ code: 'model_not_ready', details: { state: 'deleting' } });
    expect(s.gateway.calls.map((c) => c.signal.aborted)).toEqual([false, true]);
  });

  it('429 over the tenant limit, before the database and the gateway', async () => {
    const asked: string[] = [];
    const s = setup({ tenantLimiter: { limit: ({ key }) => (asked.push(key), Promise.resolve({ success: false })) } });
    const res = await s.chat();
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('10');
    expect(asked).toEqual(['tenant:acme']);
    expect(s.ledger.statements).toHaveLength(0);
    expect(s.gateway.calls).toHaveLength(0);
  });

  it('503 inference_unavailable when no gateway is configured; the admission API answers as before', async () => {
    const s = setup({ env: {} });
    for (const res of [await s.chat(), await s.post(`/v1/models/${READY}/completions`), await s.app.request('/v1/models', { headers: { Authorization: `Bearer ${KEY}` } })]) {
      expect(res.status).toBe(503);
      expect((await errorOf(res)).code).toBe('inference_unavailable');
    }
    expect(s.gateway.calls).toHaveLength(0);
    expect((await s.app.request(`/requests/${READY}`, { headers: { Authorization: `Bearer ${KEY}` } })).status).toBe(200);
  });

  it.each([
    ['an array', '[1,2]', 400, 'validation_failed'],
    ['a string', '"hi"', 400, 'validation_failed'],
    ['malformed JSON', '{"messages":', 400, 'malformed_json'],
    ['an empty body', '', 400, 'malformed_json'],
  ])('400 for %s: the body must be a JSON object', async (_what, body, status, code) => {
    const s = setup();
    const res = await s.chat(READY, body);
    expect(res.status).toBe(status);
    expect((await errorOf(res)).code).toBe(code);
    expect(s.gateway.calls).toHaveLength(0);
  });

  it('413 over MAX_BODY_BYTES, 415 for a body that is not JSON, 400 for a bad id', async () => {
    const s = setup();
    expect((await s.chat(READY, JSON.stringify({ prompt: 'x'.repeat(4096) }))).status).toBe(413);
    expect((await s.chat(READY, '{}', { 'Content-Type': 'text/plain' })).status).toBe(415);
    expect((await s.chat('not-an-id')).status).toBe(400);
    expect(s.gateway.calls).toHaveLength(0);
  });
});

describe('POST /v1/models/{id}/…: what the gateway gets', () => {
  it('the operation path under GATEWAY_URL, the body byte for byte, content type, accept and request id — never the tenant key', async () => {
    const s = setup();
    const body = '\uFEFF{ "messages" : [{"role":"user","content":"h\\u00e9 é"}],\n "stream":true, "a":1, "a":2 }';
    await s.chat(READY, body, { Accept: 'text/event-stream', 'X-Request-Id': 'req-42', Cookie: 'session=1', 'Content-Type': 'application/json; charset=utf-8' });
    await s.post(`/v1/models/${READY.toLowerCase()}/completions`, '{"prompt":"hi"}');
    const [chat, completion] = s.gateway.calls;
    expect(chat?.url).toBe('http://gateway.test:8080/v1/chat/completions');
    expect(completion?.url).toBe('http://gateway.test:8080/v1/completions');
    expect(chat?.body).toEqual(bytes(body));
    expect([...chat!.headers.keys()].sort()).toEqual(['accept', 'content-type', CREDENTIAL_HEADER, 'x-request-id']);
    expect(Object.fromEntries(chat!.headers)).toMatchObject({ accept: 'text/event-stream', 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-42' });
    for (const call of s.gateway.calls) expect(JSON.stringify([...call.headers])).not.toContain(KEY);
  });

  it('the credential verifies with the shared key and names the tenant, the admission and the request', async () => {
    const s = setup();
    await s.chat(READY, undefined, { 'X-Request-Id': 'req-7' });
    const token = s.gateway.calls[0]?.headers.get(CREDENTIAL_HEADER) ?? '';
    const v = await verifyCredential(new Map([['k1', SECRET]]), token, NOW);
    expect(v).toEqual({ ok: true, claims: { tenant: 'acme', admission: READY, requestId: 'req-7', issuedAt: NOW / 1000, expiresAt: NOW / 1000 + 60 } });
    expect(await verifyCredential(new Map([['k1', 'another-secret-0123456789abcdef-0123']]), token, NOW)).toMatchObject({ ok: false });
  });

  it('the access log line names the tenant and the admission', async () => {
    const s = setup();
    await s.chat(READY, undefined, { 'X-Request-Id': 'log-1' });
    expect(s.logs.find((l) => l.reqId === 'log-1' && l.msg === 'request')).toMatchObject({ status: 200, tenant: 'acme', admissionId: READY });
  });
});

describe('POST /v1/models/{id}/…: the answer', () => {
  it('streams: the client reads the first chunk before the gateway sends the second', async () => {
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
    const gateway = fakeGateway(() => new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-gateway-pod': '10.0.0.7', 'set-cookie': 'a=b' } }));
    const s = setup({ gateway });
    const res = await within(1000, s.chat(), 'response headers');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-gateway-pod')).toBeNull();
    expect(res.headers.get('set-cookie')).toBeNull();
    const reader = res.body!.getReader();
    feed.enqueue(bytes('data: {"n":1}\n\n'));
    expect(text((await within(1000, reader.read(), 'first chunk')).value)).toBe('data: {"n":1}\n\n');
    feed.enqueue(bytes('data: [DONE]\n\n'));
    feed.close();
    expect(text((await within(1000, reader.read(), 'second chunk')).value)).toBe('data: [DONE]\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('the headers deadline does not cut a stream that outlives it', async () => {
    const gateway = fakeGateway(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            async start(c) {
              c.enqueue(bytes('a'));
              await sleep(150);
              c.enqueue(bytes('b'));
              c.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const s = setup({ gateway, headersTimeoutMs: 30 });
    const res = await s.chat();
    expect(await res.text()).toBe('ab');
    expect(gateway.calls[0]?.signal.aborted).toBe(false);
  });

  it('504 gateway_timeout when the headers are later than GATEWAY_HEADERS_TIMEOUT_MS; the call is aborted', async () => {
    const gateway = fakeGateway((call) => new Promise<Response>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason as Error))));
    const s = setup({ gateway, headersTimeoutMs: 30 });
    const res = await within(2000, s.chat(), 'the deadline');
    expect(res.status).toBe(504);
    expect((await errorOf(res)).code).toBe('gateway_timeout');
    expect(gateway.calls[0]?.signal.aborted).toBe(true);
  });

  it("a client abort aborts the gateway call's signal: before the headers (499), and during the stream", async () => {
    const waiting = fakeGateway((call) => new Promise<Response>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason as Error))));
    const before = setup({ gateway: waiting });
    const client = new AbortController();
    const pending = before.chat(READY, undefined, undefined, client.signal);
    for (let i = 0; i < 100 && waiting.calls.length === 0; i++) await sleep(5);
    client.abort();
    expect((await within(1000, pending, 'the answer after an abort')).status).toBe(499);
    expect(waiting.calls[0]?.signal.aborted).toBe(true);

    const streaming = fakeGateway(() => new Response(new ReadableStream({ start: (c) => c.enqueue(bytes('data: 1\n\n')) }), { headers: { 'content-type': 'text/event-stream' } }));
    const during = setup({ gateway: streaming });
    const client2 = new AbortController();
    const res = await during.chat(READY, undefined, undefined, client2.signal);
    expect(res.status).toBe(200);
    expect(streaming.calls[0]?.signal.aborted).toBe(false);
    client2.abort();
    expect(streaming.calls[0]?.signal.aborted).toBe(true);
  });

  it.each([
    ['429 with its Retry-After', 429, { 'content-type': 'application/json', 'retry-after': '3' }, '{"error":{"message":"slow down","type":"rate_limit","code":null}}'],
    ['400', 400, { 'content-type': 'application/json' }, '{"error":{"message":"bad max_tokens","type":"invalid_request_error","code":null}}'],
    ["404 (the gateway's own)", 404, { 'content-type': 'application/json' }, '{"error":{"code":"not_found","type":"invalid_request_error","message":"no such model endpoint","param":null}}'],
    ["503 of the model's own", 503, { 'content-type': 'application/json', 'content-length': '40' }, '{"error":{"code":"overloaded","x":"yy"}}'],
    ['500 in plain text', 500, { 'content-type': 'text/plain' }, 'boom'],
  ] as [string, number, Record<string, string>, string][])("the model's %s passes through as it is", async (_what, status, headers, body) => {
    const s = setup({ gateway: fakeGateway(() => new Response(body, { status, headers: { ...headers, 'x-internal': '1' } })) });
    const res = await s.chat();
    expect(res.status).toBe(status);
    expect(await res.text()).toBe(body);
    expect(res.headers.get('content-type')).toBe(headers['content-type']);
    expect(res.headers.get('retry-after')).toBe(headers['retry-after'] ?? null);
    expect(res.headers.get('x-internal')).toBeNull();
  });

  const gatewayError = (status: number, code: string, headers: Record<string, string> = {}) => {
    const body = JSON.stringify({ error: { code, type: 'service_unavailable', message: 'm', param: null } });
    return new Response(body, { status, headers: { 'content-type': 'application/json', 'content-length': String(bytes(body).length), ...headers } });
  };

  it.each([
    ['no_ready_endpoint', { 'retry-after': '1' }, '1'],
    ['no_ready_endpoint', { 'retry-after': '7' }, '7'],
    ['shutting_down', {}, '1'],
  ])("the gateway's 503 %s → 503 model_unavailable with Retry-After", async (code, headers, retryAfter) => {
    const s = setup({ gateway: fakeGateway(() => gatewayError(503, code, headers)) });
    const res = await s.chat();
    expect(res.status).toBe(503);
    expect(res.headers.get('Retry-After')).toBe(retryAfter);
    expect(await errorOf(res)).toMatchObject({ code: 'model_unavailable', details: { retryAfterSeconds: Number(retryAfter) } });
  });

  it("the gateway's 401 (our credential refused) → 502 gateway_error, logged as our misconfiguration without the credential", async () => {
    const s = setup({ gateway: fakeGateway(() => gatewayError(401, 'unauthorized')) });
    const res = await s.chat(READY, undefined, { 'X-Request-Id': 'refused-1' });
    expect(res.status).toBe(502);
    expect(await errorOf(res)).toMatchObject({ code: 'gateway_error' });
    const line = s.logs.find((l) => l.msg === 'gateway refused the request');
    expect(line).toMatchObject({ level: 'error', reqId: 'refused-1', tenant: 'acme', admissionId: READY, status: 401, keyId: 'k1' });
    const token = s.gateway.calls[0]?.headers.get(CREDENTIAL_HEADER) ?? '';
    for (const secret of [SECRET, token, KEY]) expect(JSON.stringify(s.logs)).not.toContain(secret);
  });

  it('a redirect is not followed: 502 gateway_error', async () => {
    const s = setup({ gateway: fakeGateway(() => new Response(null, { status: 307, headers: { location: 'http://elsewhere.test/' } })) });
    const res = await s.chat();
    expect(res.status).toBe(502);
    expect(res.headers.get('location')).toBeNull();
    expect((await errorOf(res)).code).toBe('gateway_error');
  });

  it('an unreachable gateway → 502 gateway_error, logged with the request', async () => {
    const s = setup({ gateway: fakeGateway(() => Promise.reject(new TypeError('fetch failed'))) });
    const res = await s.chat(READY, undefined, { 'X-Request-Id': 'down-1' });
    expect(res.status).toBe(502);
    expect((await errorOf(res)).code).toBe('gateway_error');
    expect(s.logs.find((l) => l.msg === 'request failed' && l.reqId === 'down-1')).toMatchObject({ tenant: 'acme', admissionId: READY, code: 'gateway_error' });
  });
});

describe('GET /v1/models', () => {
  it("lists the caller's ready admissions only, newest first, as an OpenAI list", async () => {
    const s = setup();
    const res = await s.app.request('/v1/models', { headers: { Authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      object: 'list',
      data: [
        { id: READY, object: 'model', created: Date.parse('2026-02-02T10:00:00Z') / 1000, owned_by: 'acme', name: 'chat' },
        { id: OLDER_READY, object: 'model', created: Date.parse('2026-02-01T10:00:00Z') / 1000, owned_by: 'acme', name: 'older' },
      ],
    });
    const theirs = await s.app.request('/v1/models', { headers: { Authorization: `Bearer ${GLOBEX_KEY}` } });
    expect(((await theirs.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual([GLOBEX_READY]);
  });

  it('is in the OpenAPI document with the inference routes', async () => {
    const doc = (await (await setup().app.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/models', '/v1/models/{id}/chat/completions', '/v1/models/{id}/completions']));
  });
});
