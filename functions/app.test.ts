// The app in-process (app.request): everything that must be decided before the database is
// touched. The Db here fails the test if any statement is executed.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createApp } from './app.ts';
import { parseKeyRing } from './auth/keys.ts';
import { parseConfig, ConfigError } from './config.ts';
import { MISCONFIGURED_MESSAGE } from './errors.ts';
import type { Db } from '../ledger/db.ts';
import { PUBLIC_ROUTES } from './routes.ts';
import { createPlacer } from '../ledger/placement.ts';

const KEY = 'unit-key-0123456789abcdef';
const statements: string[] = [];
const untouchable: Db = {
  execute: (sql) => {
    statements.push(sql);
    return Promise.reject(new Error(`unexpected statement: ${sql}`));
  },
  transaction: () => Promise.reject(new Error('unexpected transaction')),
  withSignal: () => untouchable,
  onShard: () => untouchable,
};
const logs: unknown[] = [];
const allow = { limit: () => Promise.resolve({ success: true }) };
const unlimited = { ip: allow, tenant: allow };
const config = parseConfig({ DATABASE_URL: 'http://u:p@127.0.0.1:1', MAX_BODY_BYTES: '2048', MAX_REPLICAS: '4', ALLOWED_IMAGE_REGISTRIES: '*' });
const app = createApp({
  config,
  deps: () => ({ db: untouchable, clock: () => new Date(0), newId: () => '01ARZ3NDEKTSV4RRFFQ69G5FAV', placer: createPlacer() }),
  keyRing: () => parseKeyRing(JSON.stringify({ acme: KEY })),
  rateLimiters: () => unlimited,
  log: (l) => logs.push(l),
});

const body = { name: 'llm', image: 'ghcr.io/acme/llm:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } };
const req = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  app.request(path, { ...init, headers: { Authorization: `Bearer ${KEY}`, ...init.headers } });
const postRaw = (text: string) => req('/requests', { method: 'POST', body: text, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k' } });
const postJson = (b: unknown, headers: Record<string, string> = {}) =>
  req('/requests', { method: 'POST', body: JSON.stringify(b), headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k', ...headers } });

describe('routes carry their own authentication', () => {
  const routes = app.routes.filter((r) => r.method !== 'ALL'); // ALL = app-wide middleware (request id, access log)
  const keys = [...new Set(routes.map((r) => `${r.method} ${r.path}`))];

  it('the app has the routes this test knows about, and every public one exists', () => {
    expect(keys.length).toBeGreaterThanOrEqual(6);
    for (const p of PUBLIC_ROUTES) expect(keys).toContain(p);
  });

  it.each(keys)('%s: 401 without a key unless it is on the public list', async (key) => {
    const [method = 'GET', path = '/'] = key.split(' ');
    const res = await app.request(path.replace(/:[A-Za-z]+/g, '01ARZ3NDEKTSV4RRFFQ69G5FAV'), { method });
    if (PUBLIC_ROUTES.has(key)) expect(res.status, key).not.toBe(401);
    else expect(res.status, `${key} answered without authentication`).toBe(401);
  });
});

describe('app (no database)', () => {
  it.each([
    ['unknown field', () => postJson({ ...body, tenant: 'x' }), 400, 'validation_failed'],
    ['replicas above MAX_REPLICAS', () => postJson({ ...body, replicas: 5 }), 400, 'validation_failed'],
    ['missing Idempotency-Key', () => req('/requests', { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }), 400, 'validation_failed'],
    ['malformed JSON', () => req('/requests', { method: 'POST', body: '{', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k' } }), 400, 'malformed_json'],
    ['text/plain', () => postJson(body, { 'Content-Type': 'text/plain' }), 415, 'unsupported_media_type'],
    ['a body over the limit', () => postJson({ ...body, args: ['x'.repeat(4000)] }), 413, 'payload_too_large'],
    ['no key', () => app.request('/quota'), 401, 'unauthorized'],
    ['an unknown route', () => req('/admin'), 404, 'not_found'],
    ['a bad id', () => req('/requests/xyz'), 400, 'validation_failed'],
    ['a bad limit', () => req('/requests?limit=1000'), 400, 'validation_failed'],
    ['no resources and no defaults configured', () => postJson({ name: 'free', image: 'ghcr.io/x/miner:1', replicas: 4 }), 400, 'validation_failed'],
    ['cpu below MIN_CPU', () => postJson({ ...body, resources: { cpu: '1m', memory: '1Gi' } }), 400, 'validation_failed'],
    ['NVIDIA_VISIBLE_DEVICES', () => postJson({ ...body, env: [{ name: 'NVIDIA_VISIBLE_DEVICES', value: 'all' }] }), 400, 'validation_failed'],
    ['a duplicate key', () => postRaw('{"name":"llm","replicas":1,"replicas":99,"image":"ghcr.io/acme/llm:1"}'), 400, 'ambiguous_json'],
    ['a nested duplicate key', () => postRaw('{"name":"llm","image":"a/b:1","replicas":1,"resources":{"cpu":"1","cpu":"0"}}'), 400, 'ambiguous_json'],
    ['a __proto__ key', () => postRaw('{"name":"llm","image":"a/b:1","replicas":1,"__proto__":{"admin":true}}'), 400, 'ambiguous_json'],
    ['an escaped __proto__ key', () => postRaw('{"name":"llm","image":"a/b:1","replicas":1,"env":[{"\\u005f_proto__":1}]}'), 400, 'ambiguous_json'],
    ['a constructor key', () => postRaw('{"name":"llm","image":"a/b:1","replicas":1,"resources":{"constructor":{"prototype":{}}}}'), 400, 'ambiguous_json'],
  ])('%s → %i %s without touching the database', async (_what, send, status, code) => {
    const before = statements.length;
    const res = await send();
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    expect(statements.length).toBe(before);
  });

  it('renders field paths for nested errors', async () => {
    const res = await postJson({ ...body, env: [{ name: 'A', value: 1 }], resources: { cpu: 'x' } });
    const issues = ((await res.json()) as { error: { details: { issues: { path: string }[] } } }).error.details.issues;
    expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining(['env[0].value', 'resources.cpu']));
  });

  it('caps the field issues of a hostile body', async () => {
    const res = await postJson({ ...body, args: Array.from({ length: 60 }, () => 1) });
    const err = ((await res.json()) as { error: { details: { issues: unknown[]; omitted: number } } }).error;
    expect(res.status).toBe(400);
    expect(err.details.issues).toHaveLength(20);
    expect(err.details.omitted).toBe(40);
  });

  it('names the missing resources when no defaults are configured', async () => {
    const res = await postJson({ name: 'free', image: 'ghcr.io/x/miner:1', replicas: 4 });
    const err = ((await res.json()) as { error: { message: string; details: { issues: { path: string }[] } } }).error;
    expect(err.details.issues.map((i) => i.path)).toEqual(['resources.cpu', 'resources.memory']);
    expect(err.message).toMatch(/DEFAULT_CPU/);
  });

  it.each([
    ['abc:123', false],
    ['a=b', false],
    ['x'.repeat(129), false],
    ['has space', false],
    ['ok.Id_1-2', true],
    ['x'.repeat(128), true],
  ])('keeps the client X-Request-Id %s only when it is [A-Za-z0-9._-]{1,128}: %s', async (offered, kept) => {
    const res = await req('/nope', { headers: { 'X-Request-Id': offered } });
    const id = res.headers.get('X-Request-Id') ?? '';
    if (kept) expect(id).toBe(offered);
    else expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a sane X-Request-Id and logs one JSON line per request with it', async () => {
    const res = await req('/nope', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.headers.get('X-Request-Id')).toBe('abc-123');
    expect(logs.at(-1)).toMatchObject({ level: 'info', msg: 'request', reqId: 'abc-123', status: 404, path: '/nope' });
  });

  it('the request line names the tenant and the id of its key, never the key or its digest', async () => {
    const hex = (s: string) => createHash('sha256').update(s).digest('hex');
    await req('/requests/xyz', { headers: { 'X-Request-Id': 'key-id-1' } });
    await app.request('/requests/xyz', { headers: { Authorization: 'Bearer not-a-known-key-0123456789', 'X-Request-Id': 'key-id-2' } });
    const line = (reqId: string) => logs.find((l) => (l as { reqId?: string }).reqId === reqId);
    expect(line('key-id-1')).toMatchObject({ msg: 'request', tenant: 'acme', keyId: hex(`sha256:${hex(KEY)}`).slice(0, 12) });
    expect(line('key-id-2')).toMatchObject({ msg: 'request', status: 401 });
    expect(line('key-id-2')).not.toHaveProperty('keyId');
    for (const secret of [KEY, hex(KEY), hex(KEY).slice(0, 12)]) expect(JSON.stringify(logs)).not.toContain(secret);
  });

  it('serves an OpenAPI document generated from the schemas', async () => {
    const doc = (await (await app.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/requests', '/requests/{id}', '/quota', '/healthz']));
  });

  it('an invalid key configuration answers the fixed 500 misconfigured; the key is in no response and no log line', async () => {
    const lines: unknown[] = [];
    const swapped = JSON.stringify({ [KEY]: 'acme' }); // tenant and key swapped: the "tenant" is the key
    const bad = createApp({ config, deps: () => ({ db: untouchable, clock: () => new Date(0), newId: () => 'x', placer: createPlacer() }), keyRing: () => parseKeyRing(swapped), rateLimiters: () => unlimited, log: (l) => lines.push(l) });
    for (const path of ['/quota', '/requests']) {
      const res = await bad.request(path, { headers: { Authorization: `Bearer ${KEY}` } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
      expect(text).not.toContain(KEY);
    }
    const problems = lines.filter((l) => (l as { msg: string }).msg.startsWith('invalid ADMISSION_KEYS_JSON'));
    expect(problems).toHaveLength(1);
    expect(JSON.stringify(problems[0])).toMatch(/entry 1/);
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });
});

describe('configuration', () => {
  it('refuses an invalid Worker configuration with a clear message', () => {
    expect(() => parseConfig({})).toThrow(ConfigError);
    expect(() => parseConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => parseConfig({ DATABASE_URL: 'http://u:p@h', MAX_REPLICAS: 'many' })).toThrow(/MAX_REPLICAS/);
  });

  it('DB_TIMEOUT_MS: the deadline of a request\'s database work, 5 s unless set, bounded', () => {
    expect(parseConfig({ DATABASE_URL: 'http://u:p@h', ALLOWED_IMAGE_REGISTRIES: '*' }).dbTimeoutMs).toBe(5000);
    expect(parseConfig({ DATABASE_URL: 'http://u:p@h', ALLOWED_IMAGE_REGISTRIES: '*', DB_TIMEOUT_MS: '1500' }).dbTimeoutMs).toBe(1500);
    expect(() => parseConfig({ DATABASE_URL: 'http://u:p@h', DB_TIMEOUT_MS: '0' })).toThrow(/DB_TIMEOUT_MS/);
  });
});
