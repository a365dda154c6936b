// The Worker's entry in-process: production mode (MODELDOCK_ENV) reaches the key document. No
// request here gets past authentication, so no database is needed.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MISCONFIGURED_MESSAGE } from './errors.ts';
import worker, { type ExecutionContext } from './worker.ts';

const KEY = 'worker-key-0123456789abcdef';
const OTHER_KEY = 'worker-other-key-0123456789';
const DIGEST = `sha256:${createHash('sha256').update(OTHER_KEY).digest('hex')}`;
const ctx: ExecutionContext = { waitUntil: () => undefined, passThroughOnException: () => undefined, props: {} };

/** GET /quota with a key nobody has: 401 once the key document is accepted, 500 when it is refused. */
async function statusWith(env: Record<string, string>): Promise<{ status: number; body: string }> {
  const res = await worker.fetch(
    new Request('http://worker.test/quota', { headers: { Authorization: 'Bearer nobody-has-this-key-0123' } }),
    // RATE_LIMITS off: no rate-limiting binding in-process (functions/rate-limit.test.ts is about them).
    { DATABASE_URL: 'http://u:p@127.0.0.1:9', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io', RATE_LIMITS: 'off', ...env },
    ctx,
  );
  return { status: res.status, body: await res.text() };
}

describe('worker: production mode', () => {
  it.each([
    ['a plaintext key', { acme: KEY }],
    ['a list with one plaintext key', { acme: [DIGEST, KEY] }],
  ])('%s: refused (500 misconfigured) in production or with MODELDOCK_ENV unset, accepted in development', async (_what, keys) => {
    const doc = { ADMISSION_KEYS_JSON: JSON.stringify(keys) };
    for (const env of [{ MODELDOCK_ENV: 'production', ...doc }, doc]) {
      const res = await statusWith(env);
      expect(res.status).toBe(500);
      expect(JSON.parse(res.body)).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
      expect(res.body).not.toContain(KEY);
    }
    expect((await statusWith({ MODELDOCK_ENV: 'development', ...doc })).status).toBe(401);
  });

  it('accepts digests in production', async () => {
    expect((await statusWith({ MODELDOCK_ENV: 'production', ADMISSION_KEYS_JSON: JSON.stringify({ acme: [DIGEST] }) })).status).toBe(401);
  });

  it('refuses an unknown MODELDOCK_ENV as a misconfiguration', async () => {
    expect((await statusWith({ MODELDOCK_ENV: 'prod', ADMISSION_KEYS_JSON: JSON.stringify({ acme: DIGEST }) })).status).toBe(500);
  });

  it('wrangler.toml runs the deployed Worker in production', () => {
    const toml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');
    const vars = toml.slice(toml.indexOf('\n[vars]'));
    expect(vars).toMatch(/^MODELDOCK_ENV = "production"$/m);
  });
});
