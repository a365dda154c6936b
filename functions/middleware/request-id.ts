// X-Request-Id: accepted from the client when sane (1..128 of [A-Za-z0-9._-]), otherwise
// generated; stored in c.var.requestId and echoed on every response.
import type { MiddlewareHandler } from 'hono';

export interface RequestIdOptions {
  headerName?: string;
  generate?: () => string;
}

const SANE = /^[A-Za-z0-9._-]{1,128}$/;

export function requestId({ headerName = 'X-Request-Id', generate = () => crypto.randomUUID() }: RequestIdOptions = {}): MiddlewareHandler<{
  Variables: { requestId: string };
}> {
  return async function requestIdMiddleware(c, next) {
    const offered = c.req.header(headerName);
    const id = offered && SANE.test(offered) ? offered : generate();
    c.set('requestId', id);
    c.header(headerName, id);
    await next();
    c.res.headers.set(headerName, id);
  };
}
