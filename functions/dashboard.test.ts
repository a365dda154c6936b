// The dashboard routes in-process, with a stand-in for the Workers assets binding (the real one
// is exercised in workerd by test/integration/cli-worker.test.ts).
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Env } from './config.ts';
import { CONTENT_SECURITY_POLICY, mountDashboard, type AssetFetcher } from './dashboard.ts';

const files: Record<string, Response> = {};
const assets: AssetFetcher = {
  fetch: async (req) => {
    const path = new URL(req.url).pathname;
    return files[path]?.clone() ?? new Response('nope', { status: 404 });
  },
};
files['/'] = new Response('<!doctype html>', { headers: { 'Content-Type': 'text/html', 'Set-Cookie': 'a=b' } });
files['/assets/app.js'] = new Response('export {}', { headers: { 'Content-Type': 'text/javascript' } });

const app = new Hono<{ Bindings: Env }>();
mountDashboard(app);

describe('dashboard routes', () => {
  it('serve the asset with the security headers and without a cookie', async () => {
    for (const path of ['/', '/assets/app.js']) {
      const res = await app.request(path, {}, { ASSETS: assets });
      expect(res.status).toBe(200);
      expect(res.headers.get('Content-Security-Policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('X-Frame-Options')).toBe('DENY');
      expect(res.headers.get('Set-Cookie')).toBeNull();
    }
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-|\*/);
  });
  it('a missing file is a 404 envelope; a missing binding a 500 misconfigured', async () => {
    const missing = await app.request('/assets/x.js', {}, { ASSETS: assets });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'not_found', message: 'file not found' } });
    const unbound = await app.request('/', {}, {});
    expect(unbound.status).toBe(500);
    expect(((await unbound.json()) as { error: { code: string } }).error.code).toBe('misconfigured');
  });
  it('other methods are not routed', async () => {
    expect((await app.request('/', { method: 'POST' }, { ASSETS: assets })).status).toBe(404);
  });
});
