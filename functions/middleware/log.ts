// One structured JSON line per request: reqId, method, path, status, duration, and when known
// the tenant, the id of the key it authenticated with (keyId: never the key or its digest) and
// the admission id.
import type { MiddlewareHandler } from 'hono';

export type LogLine = Record<string, unknown> & { level: 'info' | 'warn' | 'error'; msg: string };
export type Logger = (line: LogLine) => void;

/** One JSON line on the console method of its level (Workers Logs and `wrangler dev --log-level` keep the level). */
export const jsonLogger: Logger = (line) => console[line.level](JSON.stringify({ time: new Date().toISOString(), ...line }));

export interface AccessLogOptions {
  log?: Logger;
  now?: () => number;
}

export function accessLog({ log = jsonLogger, now = () => Date.now() }: AccessLogOptions = {}): MiddlewareHandler<{
  Variables: { requestId: string; tenant?: string; keyId?: string; admissionId?: string };
}> {
  return async function accessLogMiddleware(c, next) {
    const start = now();
    await next();
    const status = c.res.status;
    log({
      level: status >= 500 ? 'error' : 'info',
      msg: 'request',
      reqId: c.var.requestId,
      method: c.req.method,
      path: c.req.path,
      status,
      durationMs: now() - start,
      ...(c.var.tenant ? { tenant: c.var.tenant } : {}),
      ...(c.var.keyId ? { keyId: c.var.keyId } : {}),
      ...(c.var.admissionId ? { admissionId: c.var.admissionId } : {}),
    });
  };
}

// Keys already logged by logOnce in this isolate (a handful: one per distinct configuration problem).
const loggedOnce = new Set<string>();

/** Logs `line` the first time `key` is seen in this isolate (a configuration problem hits every request). */
export function logOnce(log: Logger, key: string, line: LogLine): void {
  if (loggedOnce.has(key)) return;
  if (loggedOnce.size > 100) loggedOnce.clear();
  loggedOnce.add(key);
  log(line);
}
