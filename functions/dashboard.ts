// The tenant dashboard: `/` and `/assets/*`, static files bundled into the Worker
// (functions/dashboard-files.ts, generated from dashboard/public/). Public routes: the page
// holds no data; it calls the API with the key the tenant pastes. Every response carries a strict
// Content-Security-Policy (no inline script or style, same-origin only, Trusted Types), denies
// framing, and sets no cookie.
import type { Hono, MiddlewareHandler } from 'hono';
import type { Env } from './config.ts';
import { DASHBOARD_FILES } from './dashboard-files.ts';
import { envelope, notFound } from './errors.ts';

export const DASHBOARD_PATHS = ['/', '/assets/*'] as const;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types',
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  // The page changes with every deployment and is tiny: always revalidate.
  'Cache-Control': 'no-cache',
};

/** Serves a bundled dashboard file with the security headers (and never a cookie). */
export function serveDashboard<E extends { Bindings: Env }>(): MiddlewareHandler<E> {
  return async (c) => {
    const file = DASHBOARD_FILES[c.req.path];
    if (!file) return c.json(envelope(notFound('file')), 404);
    return new Response(c.req.method === 'HEAD' ? null : file.body, { headers: { ...SECURITY_HEADERS, 'Content-Type': file.type } });
  };
}

/** Mounts the dashboard routes (GET, and HEAD through Hono's GET). */
export function mountDashboard<E extends { Bindings: Env }>(app: Hono<E>): void {
  for (const path of DASHBOARD_PATHS) app.get(path, serveDashboard<E>());
}
