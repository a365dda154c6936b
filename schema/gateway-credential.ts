// The credential the edge (the Worker) hands the in-cluster gateway with each inference request:
// a short-lived JWT (RFC 7519, HS256) naming the tenant and the admission, signed with a key the
// two share and nothing else does. The Worker signs one per request after it checked the caller's
// API key, that the admission is the caller's and that it is ready; the gateway verifies it and
// routes only to that admission's ready endpoints. A leaked credential opens one admission for at
// most its lifetime, never another tenant's.
//
// Keys have an id (the JWT `kid`), so they rotate without a gap: the gateway accepts every key it
// holds, the Worker signs with one; add the new key to the gateway, move the Worker, remove the old.
// Web Crypto only (workerd and Node both have it); crypto.subtle.verify compares in constant time.
import { z } from 'zod';

const CREDENTIAL_ISSUER = 'modeldock-edge';
const CREDENTIAL_AUDIENCE = 'modeldock-gateway';
/** The header the credential travels in (the tenant's own Authorization never goes past the edge). */
export const CREDENTIAL_HEADER = 'x-modeldock-credential';
/** How long a credential is good for: it is checked when a request starts, never during its stream. */
export const CREDENTIAL_TTL_SECONDS = 60;
/** Clock difference between the edge and the gateway that is still accepted. */
const CLOCK_SKEW_SECONDS = 30;
/** Shortest secret: 32 bytes, the output size of SHA-256 (RFC 7518 §3.2). */
const MIN_SECRET_BYTES = 32;

export interface CredentialKey {
  /** The JWT `kid`: [A-Za-z0-9._-], at most 64 characters. */
  id: string;
  secret: string;
}

export const keyId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'a key id is 1–64 characters of A–Z a–z 0–9 . _ -');
export const credentialKeySchema = z.object({
  id: keyId,
  secret: z.string().refine((s) => new TextEncoder().encode(s).length >= MIN_SECRET_BYTES, `a secret has at least ${MIN_SECRET_BYTES} bytes`),
});

/** What a credential says. Times in whole seconds since the epoch, as JWT has them. */
export interface CredentialClaims {
  tenant: string;
  admission: string;
  /** The edge's request id, so the gateway's log lines join the Worker's. */
  requestId: string;
  issuedAt: number;
  expiresAt: number;
}

const headerSchema = z.object({ alg: z.literal('HS256'), typ: z.literal('JWT'), kid: keyId });
const payloadSchema = z.object({
  iss: z.literal(CREDENTIAL_ISSUER),
  aud: z.literal(CREDENTIAL_AUDIENCE),
  sub: z.string().min(1).max(63),
  adm: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/),
  jti: z.string().min(1).max(128),
  iat: z.number().int(),
  exp: z.number().int(),
});

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function decodeJson(part: string): unknown {
  const bytes = fromBase64url(part);
  if (!bytes) return undefined;
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}

/** Imported keys by usage and secret: importing costs more than signing a credential. A handful of keys ever live. */
const imported = new Map<string, Promise<CryptoKey>>();
const MAX_IMPORTED = 64;
function hmacKey(secret: string, usage: 'sign' | 'verify'): Promise<CryptoKey> {
  const id = `${usage}:${secret}`;
  let key = imported.get(id);
  if (!key) {
    if (imported.size >= MAX_IMPORTED) imported.clear();
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);
    imported.set(id, key);
  }
  return key;
}

/** A credential for `claims`, signed with `key`. */
export async function signCredential(key: CredentialKey, claims: CredentialClaims): Promise<string> {
  const header = base64url(encoder.encode(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: key.id })));
  const payload = base64url(
    encoder.encode(
      JSON.stringify({
        iss: CREDENTIAL_ISSUER,
        aud: CREDENTIAL_AUDIENCE,
        sub: claims.tenant,
        adm: claims.admission,
        jti: claims.requestId,
        iat: claims.issuedAt,
        exp: claims.expiresAt,
      }),
    ),
  );
  const signature = await crypto.subtle.sign('HMAC', await hmacKey(key.secret, 'sign'), encoder.encode(`${header}.${payload}`));
  return `${header}.${payload}.${base64url(new Uint8Array(signature))}`;
}

/** The claims of a credential issued now, good for CREDENTIAL_TTL_SECONDS. */
export function claimsFor(o: { tenant: string; admission: string; requestId: string; nowMs: number }): CredentialClaims {
  const issuedAt = Math.floor(o.nowMs / 1000);
  return { tenant: o.tenant, admission: o.admission, requestId: o.requestId, issuedAt, expiresAt: issuedAt + CREDENTIAL_TTL_SECONDS };
}

export type CredentialRejection = 'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'too_long_lived';
export type Verification = { ok: true; claims: CredentialClaims } | { ok: false; reason: CredentialRejection };

/**
 * Checks a credential against the keys the gateway holds (by `kid`) at `nowMs`. The reason of a
 * refusal is for the gateway's log and metrics; the caller gets one answer for all of them.
 */
export async function verifyCredential(keys: ReadonlyMap<string, string>, token: string, nowMs: number): Promise<Verification> {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 4096) return { ok: false, reason: 'malformed' };
  const [h, p, s] = parts as [string, string, string];
  const header = headerSchema.safeParse(decodeJson(h));
  const signature = fromBase64url(s);
  if (!header.success || !signature) return { ok: false, reason: 'malformed' };
  const secret = keys.get(header.data.kid);
  if (secret === undefined) return { ok: false, reason: 'unknown_key' };
  const signed = await crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), signature, encoder.encode(`${h}.${p}`));
  if (!signed) return { ok: false, reason: 'bad_signature' };
  const payload = payloadSchema.safeParse(decodeJson(p));
  if (!payload.success) return { ok: false, reason: 'malformed' };
  const now = Math.floor(nowMs / 1000);
  const c = payload.data;
  if (now >= c.exp + CLOCK_SKEW_SECONDS) return { ok: false, reason: 'expired' };
  if (c.iat > now + CLOCK_SKEW_SECONDS) return { ok: false, reason: 'not_yet_valid' };
  if (c.exp - c.iat > CREDENTIAL_TTL_SECONDS) return { ok: false, reason: 'too_long_lived' };
  return { ok: true, claims: { tenant: c.sub, admission: c.adm, requestId: c.jti, issuedAt: c.iat, expiresAt: c.exp } };
}
