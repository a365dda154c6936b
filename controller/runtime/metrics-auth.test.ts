import { describe, expect, it } from 'vitest';
import { bearerToken, MetricsAuthorizer, type ReviewApi, type UserInfo } from './metrics-auth.ts';

/** A ReviewApi answering from tables, counting calls. */
function fakeApi(users: Record<string, string>, allowed: Set<string>, fail = { on: false }) {
  const calls = { authenticate: 0, authorize: 0 };
  const api: ReviewApi = {
    async authenticate(token) {
      calls.authenticate++;
      if (fail.on) throw new Error('connect ECONNREFUSED');
      const username = users[token];
      return username ? { authenticated: true, user: { username, groups: ['system:authenticated'] } } : { authenticated: false };
    },
    async authorize(user: UserInfo, path, verb) {
      calls.authorize++;
      return { allowed: allowed.has(`${user.username}|${verb}|${path}`) };
    },
  };
  return { api, calls };
}

describe('bearerToken', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Basic abc', undefined],
    ['Bearer', undefined],
    ['Bearer abc.def', 'abc.def'],
    ['bearer  xyz ', 'xyz'],
  ])('%j → %j', (header, token) => expect(bearerToken(header)).toBe(token));
});

describe('MetricsAuthorizer', () => {
  const users = { good: 'system:serviceaccount:mon:scraper', norole: 'system:serviceaccount:mon:other' };
  const allowed = new Set(['system:serviceaccount:mon:scraper|get|/metrics']);

  it('no token → 401 without asking the API server', async () => {
    const { api, calls } = fakeApi(users, allowed);
    expect((await new MetricsAuthorizer({ api }).check(undefined, '/metrics')).status).toBe(401);
    expect(calls).toEqual({ authenticate: 0, authorize: 0 });
  });
  it('a token the API server does not accept → 401; a user without the role → 403; with it → 200', async () => {
    const { api } = fakeApi(users, allowed);
    const a = new MetricsAuthorizer({ api });
    expect((await a.check('Bearer forged', '/metrics')).status).toBe(401);
    expect(await a.check('Bearer norole', '/metrics')).toMatchObject({ status: 403, reason: 'system:serviceaccount:mon:other may not get /metrics' });
    expect(await a.check('Bearer good', '/metrics')).toEqual({ status: 200, user: 'system:serviceaccount:mon:scraper' });
  });
  it('caches an allow for allowTtlMs and a deny for denyTtlMs, per token', async () => {
    let t = 0;
    const { api, calls } = fakeApi(users, allowed);
    const a = new MetricsAuthorizer({ api, now: () => t, allowTtlMs: 60_000, denyTtlMs: 10_000 });
    await a.check('Bearer good', '/metrics');
    await a.check('Bearer norole', '/metrics');
    t = 9_999;
    await a.check('Bearer good', '/metrics');
    await a.check('Bearer norole', '/metrics');
    expect(calls).toEqual({ authenticate: 2, authorize: 2 });
    t = 10_000; // the deny expired, the allow did not
    expect((await a.check('Bearer norole', '/metrics')).status).toBe(403);
    expect((await a.check('Bearer good', '/metrics')).status).toBe(200);
    expect(calls).toEqual({ authenticate: 3, authorize: 3 });
    t = 60_000;
    await a.check('Bearer good', '/metrics');
    expect(calls).toEqual({ authenticate: 4, authorize: 4 });
  });
  it('the API server unreachable → 500, never cached', async () => {
    const fail = { on: true };
    const { api, calls } = fakeApi(users, allowed, fail);
    const a = new MetricsAuthorizer({ api, now: () => 0 });
    expect((await a.check('Bearer good', '/metrics')).status).toBe(500);
    fail.on = false;
    expect((await a.check('Bearer good', '/metrics')).status).toBe(200);
    expect(calls.authenticate).toBe(2);
  });
  it('keeps at most maxEntries decisions', async () => {
    const { api, calls } = fakeApi(users, allowed);
    const a = new MetricsAuthorizer({ api, now: () => 0, maxEntries: 1 });
    await a.check('Bearer good', '/metrics');
    await a.check('Bearer norole', '/metrics'); // evicts "good"
    await a.check('Bearer good', '/metrics');
    expect(calls.authenticate).toBe(3);
  });
});
