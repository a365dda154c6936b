// Bearer authentication: the tenant comes from the key only, and the key's id (never the key)
// is set beside it for the request log. Missing or malformed header →
// 401 (`WWW-Authenticate: Bearer …`); unknown key → 401 invalid_token; an invalid
// ADMISSION_KEYS_JSON → the fixed 500 misconfigured for every request (never half-applied);
// its problem is logged once per configuration text, never sent to a caller.
import type { MiddlewareHandler } from 'hono';
import type { Env } from '../config.ts';
import { KeyConfigError, keyForToken, type KeyRing } from '../auth/keys.ts';
import { misconfigured, unauthorized } from '../errors.ts';
import { logOnce, type Logger } from './log.ts';

export interface BearerTenantOptions {
  keyRing: (env: Env) => Promise<KeyRing>;
  log: Logger;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

export function bearerTenant({ keyRing, log }: BearerTenantOptions): MiddlewareHandler<{ Bindings: Env; Variables: { tenant: string; keyId: string } }> {
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
    const match = await keyForToken(ring, m[1]);
    if (!match) throw unauthorized('invalid API key', 'invalid_token');
    c.set('tenant', match.tenant);
    c.set('keyId', match.keyId);
    await next();
  };
}
