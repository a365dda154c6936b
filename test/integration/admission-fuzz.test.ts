// Property/fuzz test over HTTP against the Worker in workerd: ≥ 5,000 malformed or hostile
// requests (wrong types, huge strings, unknown fields, bad quantities, bad JSON, wrong content
// types, bad keys and headers, hostile paths and queries, duplicate and prototype keys, missing
// resources without defaults, resources out of bounds, images outside the allowed registries,
// environment variables that reach the node runtime, forged request ids) → only 4xx, never a
// 5xx, a sane request id on every answer, and the database is unchanged (every ledger table's
// checksum and row count).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionRequestSchema, toAdmission } from '../../schema/admission.ts';
import { parseRegistryList } from '../../schema/policy.ts';
import { testPolicy } from '../support/policy.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';

const KEY = 'fuzz-key-0123456789abcdef';
const MAX_REPLICAS = 8;
const MAX_BODY = 16_384;
const RUNS = 5_000;
const REGISTRIES = 'ghcr.io/acme,registry.acme.io';
const POLICY = testPolicy({ allowedRegistries: parseRegistryList(REGISTRIES) });

let L: LedgerDatabase;
let W: WorkerInstance;
beforeAll(async () => {
  L = await createLedgerDatabase();
  await L.setQuota('fuzz', 'cpu=1000', 'memory=1000Gi', 'nvidia.com/gpu=100');
  W = await startWorker({ databaseUrl: L.url, keys: { fuzz: KEY }, vars: {
      MAX_REPLICAS: String(MAX_REPLICAS),
      MAX_BODY_BYTES: String(MAX_BODY),
      // No defaults: a request without cpu or memory is a 400. Bounds as shipped (POLICY).
      DEFAULT_CPU: '',
      DEFAULT_MEMORY: '',
      ALLOWED_IMAGE_REGISTRIES: REGISTRIES,
    },
  });
});
afterAll(async () => {
  await W?.stop();
  await L?.drop();
});

interface Req {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const valid = { name: 'ok', image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '1', memory: '1Gi' } };
const headersFor = (over: Record<string, string> = {}) => ({ Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'fuzz', ...over });
const post = (kind: string, body: string, headers = headersFor()): Req => ({ kind, method: 'POST', path: '/requests', headers, body });
const isValidRequest = (v: unknown) => {
  const r = admissionRequestSchema(MAX_REPLICAS).safeParse(v);
  return r.success && toAdmission(r.data, POLICY).ok;
};

const junk = fc.oneof(
  fc.string(),
  fc.string({ minLength: 300, maxLength: 2_000 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.anything(), { maxKeys: 3 }),
  fc.constantFrom("'; DROP TABLE reservation; --", '../../etc/passwd', '\u0000', '🚀'.repeat(40), 'A'.repeat(70), '-lead', 'trail-'),
);
const badQuantity = fc.oneof(
  fc.constantFrom('-1', 'lots', '1.5.5', '1e100', '10Xi', '1Gb', '', ' 1', '0x10', 'NaN', 'Infinity', '9'.repeat(80), '1.5', '1m'),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
);
const field = fc.constantFrom('name', 'image', 'replicas', 'port', 'resources', 'env', 'args', 'readinessPath');

/** A valid body with one field replaced by junk (kept only if the schema rejects it). */
const wrongField = fc.tuple(field, junk).map(([f, v]) => ({ ...valid, [f]: v }));
const wrongQuantity = fc
  .tuple(fc.constantFrom('cpu', 'memory', 'nvidia.com/gpu'), badQuantity)
  .map(([r, q]) => ({ ...valid, resources: { ...valid.resources, [r]: q } }));
const unknownField = fc
  .tuple(fc.oneof(fc.constantFrom('tenant', '__proto__', 'constructor', 'Name', 'spec', 'namespace'), fc.string({ minLength: 1, maxLength: 20 })), fc.anything())
  .map(([k, v]) => `{${JSON.stringify(valid).slice(1, -1)},${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}}`);
const badNumbers = fc.oneof(
  fc.integer({ min: MAX_REPLICAS + 1 }).map((replicas) => ({ ...valid, replicas })),
  fc.integer({ max: -1 }).map((replicas) => ({ ...valid, replicas })),
  fc.double({ noInteger: true, noNaN: true }).map((replicas) => ({ ...valid, replicas })),
  fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 65_536 })).map((port) => ({ ...valid, port })),
  fc.integer({ min: 2, max: 4 }).map((n) => ({ ...valid, env: Array.from({ length: n }, () => ({ name: 'DUP', value: 'x' })) })),
  fc.integer({ min: 65, max: 80 }).map((n) => ({ ...valid, args: Array.from({ length: n }, () => 'a') })),
);
const notAnObject = fc.oneof(fc.json(), fc.constantFrom('[]', '0', 'null', '"x"', 'true')).filter((t) => {
  const v: unknown = JSON.parse(t);
  return !isValidRequest(v);
});
const badJson = fc.oneof(
  fc.string().filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
  fc.constantFrom('{"name":', '{name: "x"}', "{'a':1}", '{"a":1,}', '\u0000', '{"a":"\\x"}', '[1,2', '{}}'),
  fc.nat({ max: 200 }).map((n) => JSON.stringify(valid).slice(0, n + 1)).filter((s) => s !== JSON.stringify(valid)),
);
const deepJson = fc.integer({ min: 100, max: 5_000 }).map((d) => '['.repeat(d) + ']'.repeat(d));
const hugeBody = fc.integer({ min: MAX_BODY + 1, max: MAX_BODY * 4 }).map((n) => JSON.stringify({ ...valid, args: ['x'.repeat(n)] }));
const wrongType = fc.oneof(
  fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'json', 'application/xml', 'text/json', ''),
  fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s) && !/^\s*application\/json\s*(;.*)?$/i.test(s)),
);
const badIdempotencyKey = fc.oneof(
  fc.constantFrom('', 'has space', 'tab\tkey', 'k'.repeat(256)),
  fc.string({ minLength: 256, maxLength: 600 }).map((s) => s.replace(/[^\x21-\x7e]/g, 'a')),
);
const badAuth = fc.oneof(
  fc.constantFrom('', 'Bearer', 'Bearer ', `Basic ${KEY}`, `Bearer ${KEY}x`, `Bearer ${KEY.slice(0, -1)}`, `bearer  ${KEY} extra`),
  fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s)).map((s) => `Bearer ${s}`),
);
const ascii = (s: string) => encodeURIComponent(s).slice(0, 300);
const hostileGet = fc.oneof(
  fc.string({ maxLength: 60 }).map((s) => ({ kind: 'get-id', method: 'GET', path: `/requests/${ascii(s) || 'x'}`, headers: headersFor() })),
  fc.string({ maxLength: 60 }).map((s) => ({ kind: 'delete-id', method: 'DELETE', path: `/requests/${ascii(s) || 'x'}`, headers: headersFor() })),
  fc
    .tuple(fc.oneof(fc.string({ maxLength: 10 }), fc.integer().map(String)), fc.string({ maxLength: 30 }))
    .filter(([limit]) => !/^\s*(0*[1-9]\d?|0*100)(\.0*)?\s*$/.test(limit))
    .map(([limit, cursor]) => ({ kind: 'list-query', method: 'GET', path: `/requests?limit=${ascii(limit)}&cursor=${ascii(cursor)}`, headers: headersFor() })),
  fc.string({ maxLength: 30 }).map((s) => ({ kind: 'unknown-query', method: 'GET', path: `/requests?${ascii(s)}=1&zz=1`, headers: headersFor() })),
);

/** The valid body's text with one key written twice (JSON.parse would keep the last silently). */
const duplicateKey = fc
  .tuple(fc.constantFrom('name', 'image', 'replicas', 'resources'), fc.anything())
  .map(([k, v]) => `{${JSON.stringify(valid).slice(1, -1)},${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}}`);
const nestedDuplicate = fc.constantFrom(
  '{"name":"ok","image":"ghcr.io/acme/llm:1","replicas":1,"resources":{"cpu":"1","memory":"1Gi","cpu":"10m"}}',
  '{"name":"ok","image":"ghcr.io/acme/llm:1","replicas":1,"resources":{"cpu":"1","memory":"1Gi"},"env":[{"name":"A","value":"1","name":"B"}]}',
);
const protoKey = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', '\\u005f_proto__'), fc.constantFrom('top', 'resources', 'env'))
  .map(([k, where]) => {
    const inner = `"${k}":{"polluted":true}`;
    if (where === 'top') return `{${JSON.stringify(valid).slice(1, -1)},${inner}}`;
    if (where === 'resources') return `{"name":"ok","image":"ghcr.io/acme/llm:1","replicas":1,"resources":{"cpu":"1","memory":"1Gi",${inner}}}`;
    return `{"name":"ok","image":"ghcr.io/acme/llm:1","replicas":1,"resources":{"cpu":"1","memory":"1Gi"},"env":[{${inner}}]}`;
  });
const missingResources = fc
  .constantFrom({}, { cpu: '1' }, { memory: '1Gi' }, { 'nvidia.com/gpu': '1' })
  .chain((resources) => fc.integer({ min: 0, max: MAX_REPLICAS }).map((replicas) => ({ ...valid, replicas, resources })));
const outOfBounds = fc.oneof(
  fc.constantFrom('0', '1m', '9m', '0.005', '17', '100', '1k').map((cpu) => ({ ...valid, resources: { cpu, memory: '1Gi' } })),
  fc.constantFrom('0', '1Mi', '15Mi', '1M', '65Gi', '1Ti', '100G').map((memory) => ({ ...valid, resources: { cpu: '1', memory } })),
);
const foreignImage = fc
  .constantFrom('ghcr.io/x/miner:1', 'ghcr.io/acme-evil/llm:1', 'ghcr.io.evil.com/acme/llm:1', 'docker.io/acme/llm:1', 'nginx', 'registry.acme.io:5000/llm:1', 'evil.io/ghcr.io/acme/llm:1')
  .map((image) => ({ ...valid, image }));
const runtimeEnv = fc
  .constantFrom('NVIDIA_VISIBLE_DEVICES', 'NVIDIA_DRIVER_CAPABILITIES', 'NVIDIA_REQUIRE_CUDA', 'NVIDIA_REQUIRE_DRIVER', 'CUDA_VISIBLE_DEVICES', 'nvidia_visible_devices', 'AMD_VISIBLE_DEVICES')
  .map((name) => ({ ...valid, env: [{ name, value: 'all' }] }));
const forgedRequestId = fc.oneof(
  fc.constantFrom('a:b', 'a=b', 'x'.repeat(129), 'id with space', 'id\ttab', '../../x', '<script>', '"quoted"'),
  fc.string({ minLength: 1, maxLength: 200 }).filter((s) => /^[\x20-\x7e]+$/.test(s) && !/^[A-Za-z0-9._-]{1,128}$/.test(s)),
);

const hostile: fc.Arbitrary<Req | undefined> = fc.oneof(
  duplicateKey.map((t) => post('duplicate-key', t)),
  nestedDuplicate.map((t) => post('nested-duplicate-key', t)),
  protoKey.map((t) => post('prototype-key', t)),
  missingResources.map((b) => post('missing-resources', JSON.stringify(b))),
  outOfBounds.map((b) => post('resources-out-of-bounds', JSON.stringify(b))),
  foreignImage.map((b) => post('foreign-registry', JSON.stringify(b))),
  runtimeEnv.map((b) => post('runtime-env', JSON.stringify(b))),
  fc.tuple(forgedRequestId, fc.constantFrom('/quota', '/requests', '/nope')).map(([id, path]) => ({
    kind: 'forged-request-id',
    method: 'GET',
    path,
    headers: { ...headersFor({ 'X-Request-Id': id }), Authorization: 'Bearer wrong-key-0123456789' },
  })),
  wrongField.map((b) => (isValidRequest(b) ? undefined : post('wrong-field', JSON.stringify(b)))),
  wrongQuantity.map((b) => (isValidRequest(b) ? undefined : post('bad-quantity', JSON.stringify(b)))),
  unknownField.map((t) => post('unknown-field', t)),
  badNumbers.map((b) => post('bad-number', JSON.stringify(b))),
  notAnObject.map((t) => post('not-an-object', t)),
  badJson.map((t) => post('bad-json', t)),
  deepJson.map((t) => post('deep-json', t)),
  hugeBody.map((t) => post('huge-body', t)),
  wrongType.map((ct) => post('content-type', JSON.stringify(valid), headersFor({ 'Content-Type': ct }))),
  badIdempotencyKey.map((k) => post('idempotency-key', JSON.stringify(valid), headersFor({ 'Idempotency-Key': k }))),
  badAuth.map((a) => post('auth', JSON.stringify(valid), headersFor({ Authorization: a }))),
  hostileGet,
);

describe('fuzz: malformed and hostile requests', () => {
  it(`${RUNS} generated requests → only 4xx, database unchanged`, async () => {
    const before = await L.fingerprint();
    const statuses = new Map<number, number>();
    const kinds = new Map<string, number>();
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(hostile, async (req) => {
        fc.pre(req !== undefined);
        if (!req) return;
        const headers = { ...req.headers };
        if (headers['Content-Type'] === '') delete headers['Content-Type'];
        const res = await fetch(`${W.url}${req.path}`, { method: req.method, headers, body: req.body });
        const text = await res.text();
        sent++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        kinds.set(req.kind, (kinds.get(req.kind) ?? 0) + 1);
        expect(res.status, `${req.kind} ${req.method} ${req.path} → ${res.status} ${text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${req.kind} → ${res.status} ${text.slice(0, 300)}`).toBeLessThan(500);
        // Every error is the one envelope, and the request id is ours unless the client's was sane.
        expect((JSON.parse(text) as { error?: { code?: string } }).error?.code).toBeTypeOf('string');
        const rid = res.headers.get('X-Request-Id') ?? '';
        expect(rid).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
        const offered = req.headers['X-Request-Id'];
        if (offered !== undefined) expect(rid === offered).toBe(/^[A-Za-z0-9._-]{1,128}$/.test(offered));
      }),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20_260_429), endOnFailure: false, maxSkipsPerRun: 10 },
    );
    console.log(`[measure] fuzz: ${sent} requests sent; statuses ${JSON.stringify(Object.fromEntries(statuses))}; kinds ${JSON.stringify(Object.fromEntries(kinds))}`);
    expect(sent).toBeGreaterThanOrEqual(RUNS);
    expect(await L.fingerprint()).toBe(before);
    expect(await L.count('SELECT COUNT(*) FROM reservation')).toBe(0);
  }, 600_000);
});
