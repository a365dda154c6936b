import { describe, expect, it } from 'vitest';
import { claimsFor, CREDENTIAL_TTL_SECONDS, credentialKeySchema, signCredential, verifyCredential, type CredentialClaims } from './gateway-credential.ts';

const KEY = { id: 'k1', secret: 's'.repeat(32) };
const KEYS = new Map([[KEY.id, KEY.secret]]);
const NOW = Date.parse('2026-12-03T12:00:00Z');
const ADMISSION = '01JD5Y3QW5ZC8Y1G1M5N8D4X7K';
const claims = (over: Partial<CredentialClaims> = {}): CredentialClaims => ({ ...claimsFor({ tenant: 'acme', admission: ADMISSION, requestId: 'req-1', nowMs: NOW }), ...over });

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('gateway credential', () => {
  it('round-trips tenant, admission and request id within its lifetime', async () => {
    const token = await signCredential(KEY, claims());
    expect(await verifyCredential(KEYS, token, NOW + (CREDENTIAL_TTL_SECONDS - 1) * 1000)).toEqual({ ok: true, claims: claims() });
    expect(token.split('.')).toHaveLength(3);
  });

  it('refuses an expired one (past the skew allowance), one from the future, and one that lives too long', async () => {
    expect(await verifyCredential(KEYS, await signCredential(KEY, claims()), NOW + (CREDENTIAL_TTL_SECONDS + 30) * 1000)).toEqual({ ok: false, reason: 'expired' });
    expect(await verifyCredential(KEYS, await signCredential(KEY, claims()), NOW + (CREDENTIAL_TTL_SECONDS + 29) * 1000)).toMatchObject({ ok: true });
    const future = claims({ issuedAt: NOW / 1000 + 31, expiresAt: NOW / 1000 + 61 });
    expect(await verifyCredential(KEYS, await signCredential(KEY, future), NOW)).toEqual({ ok: false, reason: 'not_yet_valid' });
    const long = claims({ expiresAt: NOW / 1000 + CREDENTIAL_TTL_SECONDS + 1 });
    expect(await verifyCredential(KEYS, await signCredential(KEY, long), NOW)).toEqual({ ok: false, reason: 'too_long_lived' });
  });

  it('refuses another key, a changed payload, a key id it does not hold, and garbage', async () => {
    const other = await signCredential({ id: 'k1', secret: 'x'.repeat(32) }, claims());
    expect(await verifyCredential(KEYS, other, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
    const [h, , s] = (await signCredential(KEY, claims())).split('.');
    const forged = `${h}.${b64({ iss: 'modeldock-edge', aud: 'modeldock-gateway', sub: 'globex', adm: ADMISSION, jti: 'r', iat: NOW / 1000, exp: NOW / 1000 + 60 })}.${s}`;
    expect(await verifyCredential(KEYS, forged, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(await verifyCredential(KEYS, await signCredential({ ...KEY, id: 'k2' }, claims()), NOW)).toEqual({ ok: false, reason: 'unknown_key' });
    const none = `${b64({ alg: 'none', typ: 'JWT', kid: 'k1' })}.${b64({})}.`;
    for (const bad of ['', 'a.b', 'a.b.c.d', none, '!!.??.**']) expect(await verifyCredential(KEYS, bad, NOW)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('accepts every key it holds (rotation)', async () => {
    const next = { id: 'k2', secret: 'n'.repeat(40) };
    const both = new Map([...KEYS, [next.id, next.secret]]);
    for (const k of [KEY, next]) expect(await verifyCredential(both, await signCredential(k, claims()), NOW)).toMatchObject({ ok: true });
  });

  it('keys: an id of safe characters and a secret of at least 32 bytes', () => {
    expect(credentialKeySchema.safeParse(KEY).success).toBe(true);
    expect(credentialKeySchema.safeParse({ id: 'k1', secret: 's'.repeat(31) }).success).toBe(false);
    expect(credentialKeySchema.safeParse({ id: 'k 1', secret: 's'.repeat(32) }).success).toBe(false);
  });
});
