// Rate limits through the real Worker in workerd (`wrangler dev`), whose rate-limiting bindings
// are Miniflare's: the same [[ratelimits]] as wrangler.toml with small limits (startWorker
// rateLimits), so a burst crosses them on any machine. A window is 10 s and aligned to the clock,
// so a burst of 3 × the limit sent within it meets at most two windows: at least one request is
// refused, at most 2 × the limit get through. Every refusal is 429 rate_limited with Retry-After
// and the usual error body. (The shipped limits, and that wrangler.toml declares them: the unit
// test functions/rate-limit.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMITS } from '../../functions/rate-limit.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';

const IP_LIMIT = 20;
const TENANT_LIMIT = 10;
const keyOf = (tenant: string) => `${tenant}-rate-key-0123456789`;
const TENANTS = ['flood', 'calm'] as const;

let L: LedgerDatabase;
let W: WorkerInstance;
beforeAll(async () => {
  L = await createLedgerDatabase();
  for (const t of TENANTS) await L.setQuota(t, 'cpu=1', 'memory=1Gi');
  W = await startWorker({ databaseUrl: L.url, keys: Object.fromEntries(TENANTS.map((t) => [t, keyOf(t)])), rateLimits: { ip: IP_LIMIT, tenant: TENANT_LIMIT } });
});
afterAll(async () => {
  await W?.stop();
  await L?.drop();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { error?: { code: string; message: string; details?: unknown } } & Record<string, unknown>;
}

async function get(path: string, opts: { from: string; key?: string }): Promise<Answer> {
  const res = await W.fetch(path, { headers: { 'CF-Connecting-IP': opts.from, ...(opts.key ? { Authorization: `Bearer ${opts.key}` } : {}) } });
  return { status: res.status, retryAfter: res.headers.get('Retry-After'), body: (await res.json()) as Answer['body'] };
}

/** `n` requests at once (a burst); their answers. */
const burst = (n: number, one: (i: number) => Promise<Answer>) => Promise.all(Array.from({ length: n }, (_, i) => one(i)));

function expectRefusals(answers: Answer[], ok: number, limit: number, scope: 'ip' | 'tenant', period: number): void {
  const refused = answers.filter((a) => a.status === 429);
  expect(answers.filter((a) => a.status !== 429).map((a) => a.status)).toEqual(Array.from({ length: answers.length - refused.length }, () => ok));
  expect(refused.length).toBeGreaterThanOrEqual(answers.length - 2 * limit);
  for (const a of refused) {
    expect(a.retryAfter).toBe(String(period));
    expect(a.body).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining(`retry after ${period} s`), details: { limit: scope, retryAfterSeconds: period } },
    });
  }
}

describe('rate limits through the Worker', () => {
  it('per tenant, after authentication: a burst of GET /quota from many addresses is refused beyond the limit, with Retry-After; another tenant is not', async () => {
    // One address per request: the address limit never comes into it.
    const answers = await burst(3 * TENANT_LIMIT, (i) => get('/quota', { from: `198.51.100.${i + 1}`, key: keyOf('flood') }));
    expectRefusals(answers, 200, TENANT_LIMIT, 'tenant', RATE_LIMITS.tenant.periodSeconds);
    const calm = await get('/quota', { from: '198.51.100.200', key: keyOf('calm') });
    expect([calm.status, calm.body.tenant]).toEqual([200, 'calm']);
  });

  it('per address, before authentication: anonymous /healthz, and requests with a wrong key, are refused beyond the limit (429, not 401); another address is not', async () => {
    expectRefusals(await burst(3 * IP_LIMIT, () => get('/healthz', { from: '203.0.113.7' })), 200, IP_LIMIT, 'ip', RATE_LIMITS.ip.periodSeconds);
    // Failed authentication is counted too: the address limit comes first, so a flood of bad keys stops at it.
    expectRefusals(await burst(3 * IP_LIMIT, () => get('/quota', { from: '203.0.113.8', key: 'wrong-rate-key-0123456789' })), 401, IP_LIMIT, 'ip', RATE_LIMITS.ip.periodSeconds);
    // An IPv6 client is counted by its /64: addresses of one network share its count.
    expectRefusals(await burst(3 * IP_LIMIT, (i) => get('/healthz', { from: `2001:db8:7:7::${(i + 1).toString(16)}` })), 200, IP_LIMIT, 'ip', RATE_LIMITS.ip.periodSeconds);
    const other = await get('/healthz', { from: '203.0.113.9' });
    expect([other.status, other.body]).toEqual([200, { ok: true }]);
  });
});
