// The tenant dashboard: `/` and `/assets/*`, static files from the Worker's assets
// (wrangler.toml [assets], directory dashboard/public, binding ASSETS). Public routes: the page
// holds no data; it calls the API with the key the tenant pastes. Every response carries a strict
// Content-Security-Policy (no inline script or style, same-origin only, Trusted Types), denies
// framing, and sets no cookie.
import type { Hono, MiddlewareHandler } from 'hono';
import type { Env } from './config.ts';
import { envelope, misconfigured, notFound } from './errors.ts';

/** The Workers static-assets binding (only the call we use). */
export interface AssetFetcher {
  fetch(request: Request): Promise<Response>;
}

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

/** Serves a dashboard file from the assets binding, with the security headers. */
export function serveDashboard<E extends { Bindings: Env }>(): MiddlewareHandler<E> {
  return async (c) => {
    const assets = c.env.ASSETS;
    if (!assets) return c.json(envelope(misconfigured('the dashboard assets are missing: wrangler.toml needs [assets] with binding ASSETS')), 500);
    const upstream = await assets.fetch(new Request(c.req.url, { method: c.req.method, headers: { Accept: c.req.header('Accept') ?? '*/*' } }));
    if (upstream.status === 404) return c.json(envelope(notFound('file')), 404);
    const res = new Response(upstream.body, upstream);
    res.headers.delete('Set-Cookie');
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
    return res;
  };
}

/** Mounts the dashboard routes (GET, and HEAD through Hono's GET). */
export function mountDashboard<E extends { Bindings: Env }>(app: Hono<E>): void {
  for (const path of DASHBOARD_PATHS) app.get(path, serveDashboard<E>());
}
