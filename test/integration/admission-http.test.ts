// The admission API over HTTP: the real Worker in workerd (`wrangler dev`), against a
// migrated test database through ps-http-sim. Every endpoint's success and error paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MISCONFIGURED_MESSAGE } from '../../functions/errors.ts';
import { waitFor } from '../support/wait.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';

// A test that admits does so in a tenant of its own (the Worker's keys are fixed when it starts,
// so every tenant is listed here), and sets that tenant's quota itself: no test sees another's
// admissions or amounts. `globex` never admits anything: it is the "other tenant" of every test.
const TENANTS = ['acme', 'globex', 'short', 'reader', 'pager', 'gone', 'resize', 'clash', 'refused', 'quiet', 'busy'] as const;
type Tenant = (typeof TENANTS)[number];
const keyOf = (tenant: Tenant) => `${tenant}-key-0123456789abcdef`;
const KEY_ACME = keyOf('acme');
const KEY_GLOBEX = keyOf('globex');
const KEY_INITECH = 'initech-key-0123456789abcdef';

let L: LedgerDatabase;
let W: WorkerInstance;
beforeAll(async () => {
  L = await createLedgerDatabase();
  W = await startWorker({
    databaseUrl: L.url,
    // Plain keys and one stored as a digest only.
    keys: { ...Object.fromEntries(TENANTS.map((t) => [t, keyOf(t)])), initech: `sha256:${createHash('sha256').update(KEY_INITECH).digest('hex')}` },
    vars: { MAX_REPLICAS: '8', MAX_BODY_BYTES: '8192' },
  });
});
afterAll(async () => {
  await W?.stop();
  await L?.drop();
});

interface Res {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code: string; message: string; details?: unknown } };
}

async function call(method: string, path: string, opts: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== null) headers.Authorization ??= `Bearer ${opts.key ?? KEY_ACME}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(`${W.url}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Res['body']) : {} };
}

const spec = (over: Record<string, unknown> = {}) => ({
  name: 'llm',
  image: 'ghcr.io/acme/llm:1.0',
  replicas: 1,
  resources: { cpu: '500m', memory: '1Gi' },
  ...over,
});
/** A tenant of the test's own, with the quota it asks for; resolves to the tenant's key. */
async function tenant(name: Tenant, ...limits: string[]): Promise<string> {
  await L.setQuota(name, ...(limits.length ? limits : ['cpu=4', 'memory=8Gi']));
  return keyOf(name);
}
let n = 0; // unique Idempotency-Keys, nothing more
const submit = (tenantKey: string, over: Record<string, unknown> = {}, key = `idem-${++n}`) =>
  call('POST', '/requests', { key: tenantKey, body: spec(over), headers: { 'Idempotency-Key': key } });

describe('auth', () => {
  it('401 with WWW-Authenticate for a missing, malformed or unknown key', async () => {
    for (const [headers, error] of [
      [{}, undefined],
      [{ Authorization: 'Basic abc' }, 'invalid_request'],
      [{ Authorization: 'Bearer not-a-known-key-at-all' }, 'invalid_token'],
      [{ Authorization: `Bearer ${KEY_ACME}x` }, 'invalid_token'],
    ] as const) {
      const r = await call('GET', '/quota', { key: null, headers });
      expect(r.status).toBe(401);
      expect(r.body.error?.code).toBe('unauthorized');
      expect(r.headers.get('WWW-Authenticate')).toMatch(/^Bearer realm="modeldock"/);
      if (error) expect(r.headers.get('WWW-Authenticate')).toContain(`error="${error}"`);
    }
  });

  it('accepts a key configured as a sha256 digest; the tenant comes from the key', async () => {
    const r = await call('GET', '/quota', { key: KEY_INITECH });
    expect(r.status).toBe(200);
    expect(r.body.tenant).toBe('initech');
  });

  it('rejects a tenant field in the body (400), whatever it says', async () => {
    const r = await call('POST', '/requests', { body: { ...spec(), tenant: 'globex' }, headers: { 'Idempotency-Key': 'tenant-field' } });
    expect(r.status).toBe(400);
    expect(r.body.error?.details).toEqual({ issues: [{ path: 'tenant', message: 'unknown field' }] });
  });
});

describe('POST /requests', () => {
  it('201 with the admission, the request id echoed and stored', async () => {
    await tenant('acme', 'cpu=4', 'memory=8Gi', 'nvidia.com/gpu=1');
    const r = await call('POST', '/requests', { body: spec({ replicas: 2 }), headers: { 'Idempotency-Key': 'first', 'X-Request-Id': 'client-req-1' } });
    expect(r.status).toBe(201);
    expect(r.headers.get('X-Request-Id')).toBe('client-req-1');
    expect(r.body).toMatchObject({
      tenant: 'acme',
      name: 'llm',
      state: 'admitted',
      requestId: 'client-req-1',
      amounts: { cpu: 1000, memory: 2048, 'nvidia.com/gpu': 0 },
      spec: { image: 'ghcr.io/acme/llm:1.0', replicas: 2, port: 8000, readinessPath: '/healthz', env: [], args: [] },
    });
    expect(await L.count('SELECT COUNT(*) FROM reservation WHERE request_id = ?', ['client-req-1'])).toBe(1);
    // Replay: 200, same admission.
    const again = await call('POST', '/requests', { body: spec({ replicas: 2 }), headers: { 'Idempotency-Key': 'first' } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(r.body.id);
    // Same key, different body: 422.
    const other = await call('POST', '/requests', { body: spec({ replicas: 1 }), headers: { 'Idempotency-Key': 'first' } });
    expect(other.status).toBe(422);
    expect(other.body.error?.code).toBe('idempotency_key_reused');
  });

  it('generates a request id when the offered one is not sane', async () => {
    const r = await call('GET', '/healthz', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('409 naming each short resource and by how much', async () => {
    const key = await tenant('short', 'cpu=3', 'memory=8Gi', 'nvidia.com/gpu=1');
    const r = await submit(key, { replicas: 3, resources: { cpu: '2', memory: '1Gi', 'nvidia.com/gpu': '1' } });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('quota_exceeded');
    const shortfalls = (r.body.error?.details as { shortfalls: { resource: string; short: number }[] }).shortfalls;
    expect(shortfalls.map((s) => [s.resource, s.short])).toEqual([
      ['cpu', 3000],
      ['nvidia.com/gpu', 2],
    ]);
  });

  it('400 with field paths; 400 malformed JSON; 415 not JSON; 413 too large; 400 missing Idempotency-Key', async () => {
    const bad = await call('POST', '/requests', {
      body: { name: 'Bad_Name', image: 'not an image', replicas: 99, resources: { cpu: 'lots' }, env: [{ name: '1x', value: 1 }] },
      headers: { 'Idempotency-Key': 'bad' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe('validation_failed');
    const paths = (bad.body.error?.details as { issues: { path: string }[] }).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'image', 'replicas', 'resources.cpu', 'env[0].name', 'env[0].value']));

    const malformed = await call('POST', '/requests', { raw: '{"name":', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'm' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error?.code).toBe('malformed_json');

    const text = await call('POST', '/requests', { raw: JSON.stringify(spec()), headers: { 'Content-Type': 'text/plain', 'Idempotency-Key': 't' } });
    expect(text.status).toBe(415);
    const none = await call('POST', '/requests', { raw: JSON.stringify(spec()), headers: { 'Idempotency-Key': 't' } });
    expect(none.status).toBe(415);

    const big = await call('POST', '/requests', { body: spec({ args: Array.from({ length: 60 }, () => 'x'.repeat(200)) }), headers: { 'Idempotency-Key': 'big' } });
    expect(big.status).toBe(413);
    expect(big.body.error?.code).toBe('payload_too_large');

    const nokey = await call('POST', '/requests', { body: spec() });
    expect(nokey.status).toBe(400);
    expect((nokey.body.error?.details as { issues: { path: string }[] }).issues[0]?.path).toBe('header.idempotency-key');
  });
});

describe('GET /requests/:id, GET /requests, DELETE /requests/:id', () => {
  it('reads own admissions; another tenant gets exactly the 404 of a missing id', async () => {
    const key = await tenant('reader');
    const created = await submit(key, { name: 'readme' });
    const id = String(created.body.id);
    const own = await call('GET', `/requests/${id}`, { key });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id, name: 'readme', binding: null, deadOutboxRows: 0 });
    // lower-case ids are the same id (the CR name uses them)
    expect((await call('GET', `/requests/${id.toLowerCase()}`, { key })).body.id).toBe(id);

    const foreign = await call('GET', `/requests/${id}`, { key: KEY_GLOBEX });
    const missing = await call('GET', '/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV', { key: KEY_GLOBEX });
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body }).toEqual({ ...missing.body });
    expect((await call('DELETE', `/requests/${id}`, { key: KEY_GLOBEX })).status).toBe(404);
    expect((await call('GET', '/requests/not-an-id', { key })).status).toBe(400);
    const list = await call('GET', '/requests', { key: KEY_GLOBEX });
    expect(list.body.items).toEqual([]);
  });

  it('lists newest first with cursor pagination', async () => {
    const key = await tenant('pager');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(String((await submit(key, { name: `p${i}`, resources: {} }, `page-${i}`)).body.id));
    const p1 = await call('GET', '/requests?limit=2', { key });
    expect((p1.body.items as { id: string }[]).map((a) => a.id)).toEqual([ids[2], ids[1]]);
    const p2 = await call('GET', `/requests?limit=2&cursor=${String(p1.body.nextCursor)}`, { key });
    expect((p2.body.items as { id: string }[]).map((a) => a.id)).toEqual([ids[0]]);
    expect(p2.body.nextCursor).toBeNull();
    expect((await call('GET', '/requests?limit=0', { key })).status).toBe(400);
    expect((await call('GET', '/requests?cursor=zzz', { key })).status).toBe(400);
  });

  it('DELETE → 202 deleting + one outbox delete row; repeating it is idempotent', async () => {
    const key = await tenant('gone');
    const id = String((await submit(key, { name: 'gone' })).body.id);
    const d1 = await call('DELETE', `/requests/${id}`, { key });
    expect(d1.status).toBe(202);
    expect(d1.body.state).toBe('deleting');
    const d2 = await call('DELETE', `/requests/${id}`, { key });
    expect(d2.status).toBe(202);
    expect(d2.body.state).toBe('deleting');
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'delete'", [id])).toBe(1);
    expect((await call('DELETE', '/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV', { key })).status).toBe(404);
  });

  it('PATCH replicas: 202 with the pending change, 200 on a retry or to the same replicas (its key bound all the same), 400/415/422 for bad requests that change nothing, 404 for another tenant', async () => {
    const own = await tenant('resize');
    const id = String((await submit(own, { name: 'resize', replicas: 1, resources: { cpu: '250m', memory: '256Mi' } })).body.id);
    const patch = (body: unknown, key = 'resize-1', opts: { tenantKey?: string; raw?: string; headers?: Record<string, string> } = {}) =>
      call('PATCH', `/requests/${id}`, { key: opts.tenantKey ?? own, ...(opts.raw === undefined ? { body } : { raw: opts.raw }), headers: { 'Idempotency-Key': key, ...opts.headers } });
    const before = await L.fingerprint();
    for (const [res, status, code] of [
      [await patch({ replicas: 2, image: 'evil:1' }), 400, 'validation_failed'],
      [await patch({ replicas: 9 }), 400, 'validation_failed'], // MAX_REPLICAS is 8 here
      [await patch({ replicas: '2' }), 400, 'validation_failed'],
      [await patch({}), 400, 'validation_failed'],
      [await patch(undefined, 'resize-1', { raw: '{"replicas": 2', headers: { 'Content-Type': 'application/json' } }), 400, 'malformed_json'],
      [await patch(undefined, 'resize-1', { raw: 'replicas=2', headers: { 'Content-Type': 'text/plain' } }), 415, 'unsupported_media_type'],
      [await call('PATCH', `/requests/${id}`, { key: own, body: { replicas: 2 } }), 400, 'validation_failed'], // no Idempotency-Key
      [await patch({ replicas: 2 }, 'resize-1', { tenantKey: KEY_GLOBEX }), 404, 'not_found'],
    ] as const) {
      expect([res.status, res.body.error?.code], JSON.stringify(res.body)).toEqual([status, code]);
    }
    expect(await L.fingerprint()).toBe(before);

    // The replicas it already has: 200, and the key is bound to that body like any change's key.
    const noop = await patch({ replicas: 1 }, 'resize-same');
    expect([noop.status, noop.body.generation, noop.body.pendingChange]).toEqual([200, 1, null]);
    expect((await patch({ replicas: 1 }, 'resize-same')).status).toBe(200);
    const noopReused = await patch({ replicas: 3 }, 'resize-same');
    expect([noopReused.status, noopReused.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
    expect((await call('GET', `/requests/${id}`, { key: own })).body).toMatchObject({ replicas: 1, generation: 1, pendingChange: null });

    const up = await patch({ replicas: 2 });
    expect(up.status).toBe(202);
    expect(up.body).toMatchObject({ replicas: 2, chargedReplicas: 2, generation: 2, pendingChange: { fromReplicas: 1, toReplicas: 2, phase: 'applying' } });
    const again = await patch({ replicas: 2 });
    expect([again.status, again.body.generation]).toEqual([200, 2]);
    const reused = await patch({ replicas: 3 });
    expect([reused.status, reused.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
    const busy = await patch({ replicas: 3 }, 'resize-2');
    expect([busy.status, busy.body.error?.code]).toEqual([409, 'change_pending']);
    expect((await call('GET', `/requests/${id}`, { key: own })).body).toMatchObject({ replicas: 2, chargedReplicas: 2, spec: { replicas: 2 }, pendingChange: { generation: 2 } });
  });

  it('DELETE of an admission in conflict with a bound CR → 409 (an operator must resolve it); every route needs a key', async () => {
    const key = await tenant('clash');
    const id = String((await submit(key, { name: 'clash', resources: { cpu: '250m', memory: '256Mi' } })).body.id);
    await L.db.execute("UPDATE reservation SET state = 'conflict' WHERE id = ?", [id]);
    await L.db.execute(
      "INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, ever_ready, created_at, updated_at) SELECT tenant, id, 'ns', ?, 'uid-1', 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) FROM reservation WHERE id = ?",
      [`md-${id.toLowerCase()}`, id],
    );
    const r = await call('DELETE', `/requests/${id}`, { key });
    expect(r.status).toBe(409);
    expect(r.body.error?.code).toBe('conflict');
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'delete'", [id])).toBe(0);
    for (const [method, path] of [['GET', '/requests'], ['GET', `/requests/${id}`], ['DELETE', `/requests/${id}`], ['POST', '/requests'], ['GET', '/quota']] as const) {
      const res = await call(method, path, { key: null });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('DELETE of a conflict that never had a CR (refused at delivery) → 202 deleting + one outbox delete row', async () => {
    const key = await tenant('refused');
    const id = String((await submit(key, { name: 'refused', resources: { cpu: '250m', memory: '256Mi' } })).body.id);
    await L.db.execute("UPDATE reservation SET state = 'conflict', last_error = 'refused by the image policy at delivery' WHERE id = ?", [id]);
    const r = await call('DELETE', `/requests/${id}`, { key });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.state).toBe('deleting');
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'delete'", [id])).toBe(1);
  });
});

describe('GET /quota, /healthz, /openapi.json, unknown routes', () => {
  it('reports hard, reserved, active, releasing, blocked per resource', async () => {
    const quiet = await tenant('quiet');
    // Three admissions sent without resources: charged the Worker's defaults (250m, 256Mi).
    for (let i = 0; i < 3; i++) expect((await submit(quiet, { name: `q${i}`, resources: {} })).status).toBe(201);
    const r = await call('GET', '/quota', { key: quiet });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      tenant: 'quiet',
      resources: {
        cpu: { unit: 'millicores', hard: 4000, reserved: 750, active: 750, releasing: 0, blocked: 0 },
        memory: { unit: 'MiB', hard: 8192, reserved: 768 },
        'nvidia.com/gpu': { unit: 'count', hard: 0 },
        modelservices: { unit: 'count', hard: 20, reserved: 3 },
      },
    });

    // One admission deleted (500m releasing), one in conflict (250m), one refused at delivery and deleted (250m releasing).
    const busy = await tenant('busy');
    const admit = async (name: string, cpu: string) => String((await submit(busy, { name, resources: { cpu, memory: '256Mi' } })).body.id);
    const gone = await admit('gone', '500m');
    expect((await call('DELETE', `/requests/${gone}`, { key: busy })).status).toBe(202);
    const clash = await admit('clash', '250m');
    await L.db.execute("UPDATE reservation SET state = 'conflict' WHERE id = ?", [clash]);
    const refused = await admit('refused', '250m');
    await L.db.execute("UPDATE reservation SET state = 'conflict', last_error = 'refused by the image policy at delivery' WHERE id = ?", [refused]);
    expect((await call('DELETE', `/requests/${refused}`, { key: busy })).status).toBe(202);
    const cpu = ((await call('GET', '/quota', { key: busy })).body.resources as Record<string, Record<string, number>>).cpu ?? {};
    expect(cpu).toMatchObject({ reserved: 1000, active: 0, conflict: 250, releasing: 750 });
    expect(cpu.reserved).toBe((cpu.active ?? 0) + (cpu.releasing ?? 0) + (cpu.conflict ?? 0));
  });

  it('healthz (anonymous: liveness; with a key: the database too; a wrong key: 401), the OpenAPI document, 404 envelope', async () => {
    expect((await call('GET', '/healthz', { key: null })).body).toEqual({ ok: true });
    expect((await call('GET', '/healthz')).body).toEqual({ ok: true, database: 'up' });
    expect((await call('GET', '/healthz', { key: 'wrong-key-0123456789abcdef' })).status).toBe(401);
    const doc = await call('GET', '/openapi.json', { key: null });
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths as object).sort()).toEqual([
      '/healthz',
      '/queue',
      '/quota',
      '/requests',
      '/requests/{id}',
      '/v1/models',
      '/v1/models/{id}/chat/completions',
      '/v1/models/{id}/completions',
    ]);
    const post = (doc.body.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, { maximum?: number }> } }> } }>>)['/requests']?.post;
    expect(post?.requestBody.content['application/json']?.schema.properties.replicas?.maximum).toBe(8);
    const nf = await call('GET', '/nope');
    expect(nf.status).toBe(404);
    expect(nf.body.error?.code).toBe('not_found');
  });
});

describe('configuration and database failures', () => {
  it('an invalid ADMISSION_KEYS_JSON is refused as a whole; its detail (never a key) reaches the log only', async () => {
    // A tenant and a key swapped by mistake: the "tenant" IS the key.
    const w = await startWorker({ databaseUrl: L.url, keys: { [KEY_ACME]: 'acme' }, name: 'wrangler-badkeys' });
    try {
      const bodies: string[] = [];
      for (const path of ['/quota', '/requests', '/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
        const r = await fetch(`${w.url}${path}`, { headers: { Authorization: `Bearer ${KEY_ACME}` } });
        const text = await r.text();
        bodies.push(text);
        expect(r.status).toBe(500);
        expect(JSON.parse(text)).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
      }
      const log = await waitFor('the configuration problem in the Worker log', async () => {
        const text = readFileSync(w.process.logFile, 'utf8');
        return text.includes('invalid ADMISSION_KEYS_JSON') ? text : undefined;
      });
      expect(log).toMatch(/entry 1: the key is shorter than 16 characters/);
      expect(log.match(/invalid ADMISSION_KEYS_JSON/g)).toHaveLength(1); // once, not per request
      for (const text of [...bodies, log]) expect(text).not.toContain(KEY_ACME);
    } finally {
      await w.stop();
    }
  });

  it('an unreachable database → 503, never 500', async () => {
    const w = await startWorker({ databaseUrl: 'http://u:p@127.0.0.1:9', keys: { acme: KEY_ACME }, name: 'wrangler-nodb' });
    try {
      const post = await fetch(`${w.url}/requests`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY_ACME}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'x' },
        body: JSON.stringify(spec()),
      });
      expect(post.status).toBe(503);
      expect(((await post.json()) as Res['body']).error?.code).toBe('database_unavailable');
      // Anonymous /healthz touches no database: alive. With a key it is the deep check: 503.
      const anonymous = await fetch(`${w.url}/healthz`);
      expect([anonymous.status, await anonymous.json()]).toEqual([200, { ok: true }]);
      expect((await fetch(`${w.url}/healthz`, { headers: { Authorization: `Bearer ${KEY_ACME}` } })).status).toBe(503);
      for (const [method, path] of [['GET', '/requests'], ['GET', '/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV'], ['DELETE', '/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV'], ['GET', '/quota']]) {
        const res = await fetch(`${w.url}${path}`, { method, headers: { Authorization: `Bearer ${KEY_ACME}` } });
        expect(res.status, `${method} ${path}`).toBe(503);
        expect(res.headers.get('Retry-After')).toBe('1');
      }
    } finally {
      await w.stop();
    }
  });
});
