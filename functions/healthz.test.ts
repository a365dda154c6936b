// GET /healthz in-process: an anonymous caller gets a static liveness answer and costs no
// database round trip; a caller with a tenant key gets the deep check (the database must answer),
// after authentication and the tenant's rate limit.
import { describe, expect, it } from 'vitest';
import { createApp } from './app.ts';
import { parseKeyRing } from './auth/keys.ts';
import { parseConfig } from './config.ts';
import { DatabaseUnavailable, type Db } from '../ledger/db.ts';
import type { RateLimiter } from './rate-limit.ts';
import { createPlacer } from '../ledger/placement.ts';

const KEY = 'acme-key-0123456789abcdef';

function setup(database: 'up' | 'down') {
  const statements: string[] = [];
  const db: Db = {
    execute: (sql) => {
      statements.push(sql);
      return database === 'up' ? Promise.resolve({ rows: [{ 1: '1' }], rowsAffected: 0, insertId: '0' } as never) : Promise.reject(new DatabaseUnavailable('down'));
    },
    transaction: () => Promise.reject(new Error('unexpected transaction')),
    withSignal: () => db,
    onShard: () => db,
  };
  const asked: string[] = [];
  const limiter: RateLimiter = {
    limit: ({ key }) => {
      asked.push(key);
      return Promise.resolve({ success: true });
    },
  };
  const app = createApp({
    config: parseConfig({ DATABASE_URL: 'http://u:p@127.0.0.1:1', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io' }),
    deps: () => ({ db, clock: () => new Date(0), newId: () => 'x', placer: createPlacer() }),
    keyRing: () => parseKeyRing(JSON.stringify({ acme: KEY })),
    rateLimiters: () => ({ ip: limiter, tenant: limiter }),
    log: () => undefined,
  });
  const get = (headers: Record<string, string> = {}) => app.request('/healthz', { headers: { 'CF-Connecting-IP': '203.0.113.9', ...headers } });
  return { statements, asked, get };
}

describe('GET /healthz', () => {
  it('anonymous: a static liveness answer, no database round trip (even with the database down), only the address is counted', async () => {
    for (const database of ['up', 'down'] as const) {
      const s = setup(database);
      const res = await s.get();
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      expect(s.statements).toEqual([]);
      expect(s.asked).toEqual(['ip:203.0.113.9']);
    }
  });

  it('with a tenant key: authenticated, counted for the tenant, and the database must answer (200 up / 503)', async () => {
    const up = setup('up');
    const res = await up.get({ Authorization: `Bearer ${KEY}` });
    expect([res.status, await res.json()]).toEqual([200, { ok: true, database: 'up' }]);
    expect(up.statements).toEqual(['SELECT 1']);
    expect(up.asked).toEqual(['ip:203.0.113.9', 'tenant:acme']);

    const down = setup('down');
    const res2 = await down.get({ Authorization: `Bearer ${KEY}` });
    expect(res2.status).toBe(503);
    expect(((await res2.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
  });

  it('with a wrong key: 401, and no database round trip', async () => {
    const s = setup('up');
    const res = await s.get({ Authorization: 'Bearer wrong-key-0123456789abcdef' });
    expect(res.status).toBe(401);
    expect(s.statements).toEqual([]);
  });
});
