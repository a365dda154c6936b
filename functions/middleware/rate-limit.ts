// Rate-limit middleware: asks one limiter about this request's key; over the limit → 429
// `rate_limited` with Retry-After (rendered by app.ts's onError like every other error). Built
// once per scope: before authentication keyed on the client address, after it on the tenant.
// Without a limiter (RATE_LIMITS = "off") it lets every request through.
import type { Context, Env as HonoEnv, MiddlewareHandler } from 'hono';
import { rateLimited } from '../errors.ts';
import type { RateLimiter, RateLimitScope } from '../rate-limit.ts';

export interface RateLimitOptions<H extends HonoEnv> {
  scope: RateLimitScope;
  /** The limiter of this request's environment; undefined = rate limits off. */
  limiter: (env: H['Bindings']) => RateLimiter | undefined;
  /** What is counted: the client address, or the authenticated tenant. */
  key: (c: Context<H>) => string;
  periodSeconds: number;
}

export function rateLimit<H extends HonoEnv>({ scope, limiter, key, periodSeconds }: RateLimitOptions<H>): MiddlewareHandler<H> {
  return async function rateLimitMiddleware(c, next) {
    const l = limiter(c.env);
    if (l && !(await l.limit({ key: `${scope}:${key(c)}` })).success) throw rateLimited(scope, periodSeconds);
    await next();
  };
}
