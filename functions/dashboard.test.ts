// The dashboard routes in-process (workerd serves the same bundle: test/integration/cli-worker.test.ts).
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Env } from './config.ts';
import { CONTENT_SECURITY_POLICY, mountDashboard } from './dashboard.ts';
import { DASHBOARD_FILES } from './dashboard-files.ts';

const app = new Hono<{ Bindings: Env }>();
mountDashboard(app);

describe('dashboard routes', () => {
  it('serve every bundled file with its type and the security headers, without a cookie', async () => {
    expect(Object.keys(DASHBOARD_FILES)).toEqual(expect.arrayContaining(['/', '/assets/app.js']));
    for (const [path, file] of Object.entries(DASHBOARD_FILES)) {
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('Content-Type')).toBe(file.type);
      expect(await res.text()).toBe(file.body);
      expect(res.headers.get('Content-Security-Policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('X-Frame-Options')).toBe('DENY');
      expect(res.headers.get('Set-Cookie')).toBeNull();
    }
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-|\*/);
  });
  it('a missing file is a 404 envelope', async () => {
    const missing = await app.request('/assets/x.js');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'not_found', message: 'file not found' } });
  });
  it('other methods are not routed', async () => {
    expect((await app.request('/', { method: 'POST' })).status).toBe(404);
  });
});
