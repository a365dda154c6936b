// Bearer authentication: the tenant comes from the key only. Missing or malformed header →
// 401 (`WWW-Authenticate: Bearer …`); unknown key → 401 invalid_token; an invalid
// ADMISSION_KEYS_JSON → the fixed 500 misconfigured for every request (never half-applied);
// its problem is logged once per configuration text, never sent to a caller.
import type { MiddlewareHandler } from 'hono';
import type { Env } from '../config.ts';
import { KeyConfigError, tenantForToken, type KeyRing } from '../auth/keys.ts';
import { misconfigured, unauthorized } from '../errors.ts';
import { logOnce, type Logger } from './log.ts';

export interface BearerTenantOptions {
  keyRing: (env: Env) => Promise<KeyRing>;
  log: Logger;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

export function bearerTenant({ keyRing, log }: BearerTenantOptions): MiddlewareHandler<{ Bindings: Env; Variables: { tenant: string } }> {
  return async function bearerTenantMiddleware(c, next) {
    let ring: KeyRing;
    try {
      ring = await keyRing(c.env);
    } catch (err) {
      if (!(err instanceof KeyConfigError)) throw err;
      logOnce(log, err.message, { level: 'error', msg: 'invalid ADMISSION_KEYS_JSON: every request is refused', error: err.message });
      throw misconfigured();
    }
    const header = c.req.header('Authorization');
    if (!header) throw unauthorized('missing Authorization: Bearer <key>', undefined);
    const m = BEARER.exec(header);
    if (!m?.[1]) throw unauthorized('malformed Authorization header; expected "Bearer <key>"', 'invalid_request');
    const tenant = await tenantForToken(ring, m[1]);
    if (!tenant) throw unauthorized('invalid API key', 'invalid_token');
    c.set('tenant', tenant);
    await next();
  };
}
