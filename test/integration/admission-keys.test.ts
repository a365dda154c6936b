// Several API keys per tenant through the real Worker (workerd, `wrangler dev`) against a migrated
// test database: a key rotation as an operator does it (add the new key, move the clients, remove
// the old one), the key id in the request log line (never the key), and production mode refusing
// a plaintext key. The Worker's keys are fixed when it starts, so each step starts a Worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MISCONFIGURED_MESSAGE } from '../../functions/errors.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { waitFor } from '../support/wait.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';

const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const digestOf = (key: string) => `sha256:${hex(key)}`;
/** The key id as docs/admission-api.md tells an operator to compute it. */
const idOf = (key: string) => hex(digestOf(key)).slice(0, 12);

const OLD = 'rotor-old-key-0123456789abcdef';
const NEW = 'mdk_rotor-new-key-0123456789abcdef';
const OTHER = 'other-key-0123456789abcdef';
const run = randomBytes(4).toString('hex'); // request ids unique to this run (log files are appended to)
const SPEC = { name: 'rotor', image: 'docker.io/modeldock/mock-model:0.1.0', replicas: 1, resources: { cpu: '250m', memory: '256Mi' } };

interface Res {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}

async function call(w: WorkerInstance, key: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Res> {
  const res = await w.fetch(path, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Res['body']) : {} };
}

/** The Worker's JSON log lines (wrangler dev prints each console line as is). */
function jsonLines(w: WorkerInstance): Record<string, unknown>[] {
  return readFileSync(w.process.logFile, 'utf8')
    .split('\n')
    .flatMap((line) => {
      const at = line.indexOf('{"');
      if (at < 0) return [];
      try {
        return [JSON.parse(line.slice(at)) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

let L: LedgerDatabase;
beforeAll(async () => {
  L = await createLedgerDatabase();
  await L.setQuota('rotor', 'cpu=4', 'memory=8Gi');
});
afterAll(async () => {
  await L?.drop();
});

describe('several keys per tenant', () => {
  it('two keys of one tenant reach the same admissions; the log names each by its key id; removing the old key leaves the new one working', async () => {
    // Step 1 of a rotation: the tenant's old key (plaintext, as development allows) and the new one (a digest).
    const both = await startWorker({ databaseUrl: L.url, keys: { rotor: [OLD, digestOf(NEW)], other: OTHER }, name: 'wrangler-keys-both' });
    let id: string;
    try {
      const created = await call(both, OLD, 'POST', '/requests', { 'Idempotency-Key': 'rotate-1', 'X-Request-Id': `old-${run}` }, SPEC);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.tenant).toBe('rotor');
      id = String(created.body.id);

      // Step 2: a client moved to the new key sees the same tenant's admission, list, quota and idempotency scope.
      const read = await call(both, NEW, 'GET', `/requests/${id}`, { 'X-Request-Id': `new-${run}` });
      expect([read.status, read.body.id, read.body.tenant]).toEqual([200, id, 'rotor']);
      expect(((await call(both, NEW, 'GET', '/requests')).body.items as { id: string }[]).map((a) => a.id)).toEqual([id]);
      const quota = await call(both, NEW, 'GET', '/quota');
      expect(quota.body).toMatchObject({ tenant: 'rotor', resources: { cpu: { reserved: 250 } } });
      const replay = await call(both, NEW, 'POST', '/requests', { 'Idempotency-Key': 'rotate-1' }, SPEC);
      expect([replay.status, replay.body.id]).toEqual([200, id]);
      expect((await call(both, OTHER, 'GET', `/requests/${id}`)).status).toBe(404); // another tenant's key

      const lines = await waitFor('the request lines of both keys in the Worker log', async () => {
        const all = jsonLines(both).filter((l) => l.msg === 'request');
        const [old, fresh] = [`old-${run}`, `new-${run}`].map((reqId) => all.find((l) => l.reqId === reqId));
        return old && fresh ? { old, fresh } : undefined;
      });
      expect(lines.old).toMatchObject({ tenant: 'rotor', keyId: idOf(OLD), status: 201, admissionId: id });
      expect(lines.fresh).toMatchObject({ tenant: 'rotor', keyId: idOf(NEW), status: 200, admissionId: id });
      const log = readFileSync(both.process.logFile, 'utf8');
      for (const secret of [OLD, NEW, hex(OLD), hex(NEW)]) expect(log).not.toContain(secret);
    } finally {
      await both.stop();
    }

    // Step 3: the old key removed (and production mode: digests only).
    const rotated = await startWorker({ databaseUrl: L.url, keys: { rotor: [digestOf(NEW)], other: digestOf(OTHER) }, vars: { MODELDOCK_ENV: 'production' }, name: 'wrangler-keys-rotated' });
    try {
      const refused = await call(rotated, OLD, 'GET', `/requests/${id}`);
      expect([refused.status, refused.body.error?.code]).toEqual([401, 'unauthorized']);
      const read = await call(rotated, NEW, 'GET', `/requests/${id}`);
      expect([read.status, read.body.id, read.body.tenant]).toEqual([200, id, 'rotor']);
    } finally {
      await rotated.stop();
    }
  });

  it('in production a plaintext key refuses the whole key document: 500 misconfigured for every key, the problem logged by position, never the key', async () => {
    const w = await startWorker({ databaseUrl: L.url, keys: { rotor: [digestOf(NEW), OLD] }, vars: { MODELDOCK_ENV: 'production' }, name: 'wrangler-keys-plaintext' });
    try {
      for (const key of [NEW, OLD]) {
        const r = await call(w, key, 'GET', '/quota');
        expect(r.status).toBe(500);
        expect(r.body).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
      }
      const log = await waitFor('the configuration problem in the Worker log', async () => {
        const text = readFileSync(w.process.logFile, 'utf8');
        return text.includes('a plaintext key is refused in production') ? text : undefined;
      });
      expect(log).toMatch(/entry 1 key 2: a plaintext key is refused in production/);
      expect(log).not.toContain(OLD);
    } finally {
      await w.stop();
    }
  });
});
