// Rate limits in-process: the limits shipped in wrangler.toml, the client-address key, the
// bindings being required, and the app asking the right limiter at the right moment (fakes count
// per key). The real binding under wrangler dev: test/integration/rate-limit.test.ts.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createApp } from './app.ts';
import { parseKeyRing } from './auth/keys.ts';
import { ConfigError, parseConfig } from './config.ts';
import { MISCONFIGURED_MESSAGE } from './errors.ts';
import { addressKey, RATE_LIMITS, rateLimitersOf, type RateLimiter } from './rate-limit.ts';
import { ratelimitsOf, withLimits } from './rate-limit-config.ts';
import worker, { type ExecutionContext } from './worker.ts';
import type { Db } from '../ledger/db.ts';
import { createPlacer } from '../ledger/placement.ts';

const WRANGLER_TOML = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');

describe('the shipped limits', () => {
  it('wrangler.toml declares exactly the bindings RATE_LIMITS names, with its limits and periods, each in a namespace of its own', () => {
    const declared = ratelimitsOf(WRANGLER_TOML);
    expect(declared.map(({ name, limit, period }) => ({ name, limit, period }))).toEqual(
      Object.values(RATE_LIMITS).map((s) => ({ name: s.binding, limit: s.limit, period: s.periodSeconds })),
    );
    expect(new Set(declared.map((d) => d.namespaceId)).size).toBe(declared.length);
    for (const d of declared) expect(d.namespaceId).toMatch(/^\d+$/);
  });

  it('withLimits changes only the limits it names (the test harness runs its Workers so)', () => {
    const text = withLimits(WRANGLER_TOML, { TENANT_RATE_LIMITER: 7 });
    expect(ratelimitsOf(text).map((d) => [d.name, d.limit, d.period])).toEqual([
      ['IP_RATE_LIMITER', RATE_LIMITS.ip.limit, 10],
      ['TENANT_RATE_LIMITER', 7, 10],
    ]);
    expect(text.replace(/limit = 7,/, `limit = ${RATE_LIMITS.tenant.limit},`)).toBe(WRANGLER_TOML);
    expect(() => withLimits(WRANGLER_TOML, { NOPE: 1 })).toThrow(/NOPE/);
    expect(() => ratelimitsOf('[[ratelimits]]\nname = "X"\n')).toThrow(/namespace_id/);
  });
});

describe('addressKey', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    [' 203.0.113.9 ', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:0002::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:1::', '2001:db8:1:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['', 'unknown'],
    [undefined, 'unknown'],
  ])('%s → %s', (ip, key) => expect(addressKey(ip)).toBe(key));

  it('one IPv6 network (/64) is one key; the next network is another', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb::2'));
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });
});

describe('the bindings are required', () => {
  const allow: RateLimiter = { limit: () => Promise.resolve({ success: true }) };

  it('RATE_LIMITS on (the default): a missing binding is a configuration error naming it; present ones are used', () => {
    expect(() => rateLimitersOf({}, true)).toThrow(ConfigError);
    expect(() => rateLimitersOf({ IP_RATE_LIMITER: allow }, true)).toThrow(/TENANT_RATE_LIMITER/);
    expect(() => rateLimitersOf({ IP_RATE_LIMITER: allow, TENANT_RATE_LIMITER: 'not a binding' }, true)).toThrow(/TENANT_RATE_LIMITER/);
    expect(rateLimitersOf({ IP_RATE_LIMITER: allow, TENANT_RATE_LIMITER: allow }, true)).toEqual({ ip: allow, tenant: allow });
    expect(rateLimitersOf({}, false)).toBeUndefined();
  });

  it('RATE_LIMITS is "on" unless set to "off"; anything else is refused', () => {
    expect(parseConfig({ DATABASE_URL: 'http://u:p@h', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io' }).rateLimits).toBe(true);
    expect(parseConfig({ DATABASE_URL: 'http://u:p@h', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io', RATE_LIMITS: 'off' }).rateLimits).toBe(false);
    expect(() => parseConfig({ DATABASE_URL: 'http://u:p@h', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io', RATE_LIMITS: 'no' })).toThrow(/RATE_LIMITS/);
  });

  it('the Worker without its bindings refuses every request (500 misconfigured); with RATE_LIMITS off it serves', async () => {
    const ctx: ExecutionContext = { waitUntil: () => undefined, passThroughOnException: () => undefined, props: {} };
    const env = { DATABASE_URL: 'http://u:p@127.0.0.1:9', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io', MODELDOCK_ENV: 'development', ADMISSION_KEYS_JSON: '{"acme":"acme-key-0123456789abcdef"}' };
    const without = await worker.fetch(new Request('http://worker.test/healthz'), env, ctx);
    expect(without.status).toBe(500);
    expect(await without.json()).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
    expect((await worker.fetch(new Request('http://worker.test/healthz'), { ...env, RATE_LIMITS: 'off' }, ctx)).status).toBe(200);
    expect((await worker.fetch(new Request('http://worker.test/healthz'), { ...env, IP_RATE_LIMITER: allow, TENANT_RATE_LIMITER: allow }, ctx)).status).toBe(200);
  });
});

/** A fake binding: allows `limit` requests per key, records every key it was asked about. */
function counter(limit: number): RateLimiter & { keys: string[] } {
  const keys: string[] = [];
  return {
    keys,
    limit: ({ key }) => {
      keys.push(key);
      return Promise.resolve({ success: keys.filter((k) => k === key).length <= limit });
    },
  };
}

describe('the app with rate limits', () => {
  const KEY = 'acme-key-0123456789abcdef';
  const statements: string[] = [];
  const db: Db = {
    execute: (sql) => {
      statements.push(sql);
      return Promise.resolve({ rows: [], rowsAffected: 0, insertId: '0' } as never);
    },
    transaction: () => Promise.reject(new Error('unexpected transaction')),
    withSignal: () => db,
    onShard: () => db,
  };
  const setup = (ipLimit: number, tenantLimit: number) => {
    const ip = counter(ipLimit);
    const tenant = counter(tenantLimit);
    let keyChecks = 0;
    const app = createApp({
      config: parseConfig({ DATABASE_URL: 'http://u:p@127.0.0.1:1', ALLOWED_IMAGE_REGISTRIES: 'ghcr.io' }),
      deps: () => ({ db, clock: () => new Date(0), newId: () => '01ARZ3NDEKTSV4RRFFQ69G5FAV', placer: createPlacer() }),
      keyRing: () => {
        keyChecks++;
        return parseKeyRing(JSON.stringify({ acme: KEY }));
      },
      rateLimiters: () => ({ ip, tenant }),
      log: () => undefined,
    });
    const get = (path: string, from: string, key?: string) =>
      app.request(path, { headers: { 'CF-Connecting-IP': from, ...(key ? { Authorization: `Bearer ${key}` } : {}) } });
    return { ip, tenant, get, keyChecks: () => keyChecks };
  };

  it('every request counts against its address BEFORE authentication: over the limit, a bad key is 429, and no key is even checked', async () => {
    const s = setup(2, 100);
    expect((await s.get('/quota', '203.0.113.9', 'wrong-key-0123456789abcdef')).status).toBe(401);
    expect((await s.get('/openapi.json', '203.0.113.9')).status).toBe(200);
    const checks = s.keyChecks();
    const res = await s.get('/quota', '203.0.113.9', 'wrong-key-0123456789abcdef');
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe(String(RATE_LIMITS.ip.periodSeconds));
    expect(await res.json()).toEqual({
      error: { code: 'rate_limited', message: 'too many requests from this address; retry after 10 s', details: { limit: 'ip', retryAfterSeconds: 10 } },
    });
    expect(s.keyChecks()).toBe(checks);
    // Another address is counted on its own; an IPv6 network by its /64.
    expect((await s.get('/openapi.json', '203.0.113.10')).status).toBe(200);
    expect(s.ip.keys).toEqual(['ip:203.0.113.9', 'ip:203.0.113.9', 'ip:203.0.113.9', 'ip:203.0.113.10']);
    expect(s.tenant.keys).toEqual([]);
  });

  it('an authenticated request counts against its tenant, from any address: over the limit, 429 with Retry-After before the database', async () => {
    const s = setup(100, 2);
    expect((await s.get('/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV', '203.0.113.1', KEY)).status).toBe(404);
    expect((await s.get('/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV', '203.0.113.2', KEY)).status).toBe(404);
    const before = statements.length;
    const res = await s.get('/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV', '203.0.113.3', KEY);
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe(String(RATE_LIMITS.tenant.periodSeconds));
    expect(await res.json()).toEqual({
      error: { code: 'rate_limited', message: 'too many requests for this tenant; retry after 10 s', details: { limit: 'tenant', retryAfterSeconds: 10 } },
    });
    expect(statements.length).toBe(before);
    expect(s.tenant.keys).toEqual(['tenant:acme', 'tenant:acme', 'tenant:acme']);
    // A request that fails authentication never reaches the tenant's limit.
    expect((await s.get('/quota', '203.0.113.4', 'wrong-key-0123456789abcdef')).status).toBe(401);
    expect(s.tenant.keys).toHaveLength(3);
  });
});
