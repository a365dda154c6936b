// The Worker's rate limits: two Cloudflare Workers rate-limiting bindings (wrangler.toml
// [[ratelimits]]). IP counts every request per client address (CF-Connecting-IP) before
// authentication, so unauthenticated traffic (bad keys, /healthz, the page, /openapi.json) is
// bounded before any work; TENANT counts every authenticated request per tenant. A request over
// either limit is 429 `rate_limited` with Retry-After = the limit's period (the binding tells
// only yes or no, and its window rolls over within one period).
//
// The bindings are required: a Worker without them refuses every request (misconfigured), unless
// its operator explicitly sets RATE_LIMITS = "off" (a Worker behind a limiter of its own, or the
// benchmark's bare workerd, which has no such binding).
import { ConfigError, type Env } from './config.ts';

/** The rate-limiting binding's API (`env.<BINDING>.limit({ key })`); a fake in unit tests. */
export interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

export type RateLimitScope = 'ip' | 'tenant';

export interface RateLimitSpec {
  /** The binding's name in wrangler.toml and in `env`. */
  binding: 'IP_RATE_LIMITER' | 'TENANT_RATE_LIMITER';
  /** Requests allowed per period and key: wrangler.toml's `simple.limit` (rate-limit.test.ts checks it). */
  limit: number;
  /** wrangler.toml's `simple.period` (10 or 60 s); also the Retry-After of a 429. */
  periodSeconds: 10 | 60;
}

/**
 * The shipped limits. Normal use stays far below them: the CLI's `--wait` polls once a second per
 * admission, the page a few requests every few seconds; a tenant waiting on 20 admissions at
 * once sends about 20 per second. 300 requests at once from one tenant are not normal use.
 */
export const RATE_LIMITS: Record<RateLimitScope, RateLimitSpec> = {
  ip: { binding: 'IP_RATE_LIMITER', limit: 600, periodSeconds: 10 },
  tenant: { binding: 'TENANT_RATE_LIMITER', limit: 200, periodSeconds: 10 },
};

export type RateLimiters = Record<RateLimitScope, RateLimiter>;

const isLimiter = (v: unknown): v is RateLimiter => typeof v === 'object' && v !== null && typeof (v as { limit?: unknown }).limit === 'function';

/**
 * The limiters of this environment: `undefined` only when RATE_LIMITS is "off". Throws when a
 * binding is missing (the caller turns that into the misconfigured answer).
 */
export function rateLimitersOf(env: Env, enabled: boolean): RateLimiters | undefined {
  if (!enabled) return undefined;
  const missing = Object.values(RATE_LIMITS)
    .map((s) => s.binding)
    .filter((b) => !isLimiter(env[b]));
  if (missing.length > 0) {
    throw new ConfigError(`invalid Worker configuration: the rate-limiting binding(s) ${missing.join(', ')} are missing (wrangler.toml [[ratelimits]]); set RATE_LIMITS = "off" only to run without rate limits`);
  }
  return { ip: env.IP_RATE_LIMITER as RateLimiter, tenant: env.TENANT_RATE_LIMITER as RateLimiter };
}

/**
 * The key of a client address: an IPv4 address as it is, an IPv6 address by its /64 (one
 * customer's network usually holds a whole /64, so counting single addresses would let it rotate
 * through them). No address (never at the edge, which always sets CF-Connecting-IP) is one key.
 */
export function addressKey(ip: string | undefined): string {
  const a = ip?.trim().toLowerCase();
  if (!a) return 'unknown';
  if (!a.includes(':')) return a;
  // An IPv4 address written as IPv6 (::ffff:192.0.2.1) is that IPv4 address.
  if (a.includes('.')) return a.slice(a.lastIndexOf(':') + 1);
  const [head = '', tail] = a.split('::', 2);
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0');
  const groups = [...left, ...fill, ...right].slice(0, 4).map((g) => g.replace(/^0+(?=.)/, ''));
  while (groups.length < 4) groups.push('0');
  return `${groups.join(':')}::/64`;
}
