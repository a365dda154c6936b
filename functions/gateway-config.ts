// The inference part of the Worker's configuration: where the in-cluster gateway is
// (GATEWAY_URL), the key the edge signs its credential with (the secret GATEWAY_CREDENTIAL_KEY,
// schema/gateway-credential.ts), and the public base of the URLs tenants are given (PUBLIC_URL).
// The gateway needs both or neither: neither turns inference off (503 inference_unavailable, the
// admission API unaffected); one alone is a misconfiguration. A problem is returned as text for
// config.ts's ConfigError; it never quotes the key document (a JSON.parse message would).
import { credentialKeySchema, type CredentialKey } from '../schema/gateway-credential.ts';

export interface GatewayConfig {
  /** GATEWAY_URL without a trailing slash: requests go to `${url}/v1/chat/completions` and `${url}/v1/completions`. */
  url: string;
  key: CredentialKey;
  /** GATEWAY_HEADERS_TIMEOUT_MS: the gateway's response headers arrive within it, or 504 gateway_timeout. */
  headersTimeoutMs: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const blank = (v: string | undefined): v is undefined => v === undefined || v.trim() === '';

function asUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** GATEWAY_URL: http(s), no credentials, query or fragment; a path prefix is kept. */
export function parseGatewayUrl(text: string): Parsed<string> {
  const u = asUrl(text.trim());
  if (!u || !['http:', 'https:'].includes(u.protocol) || u.username || u.password || u.search || u.hash) {
    return { ok: false, problem: 'GATEWAY_URL must be an http(s) URL without credentials, query or fragment (e.g. http://modeldock-gateway.modeldock-gateway.svc:8080)' };
  }
  return { ok: true, value: `${u.origin}${u.pathname}`.replace(/\/+$/, '') };
}

/** GATEWAY_CREDENTIAL_KEY: {"id": …, "secret": ≥ 32 bytes}. Problems name fields only, never their values. */
export function parseGatewayKey(text: string): Parsed<CredentialKey> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'GATEWAY_CREDENTIAL_KEY is not JSON: expected {"id":"k1","secret":"<at least 32 bytes>"}' };
  }
  const r = credentialKeySchema.safeParse(doc);
  if (!r.success) return { ok: false, problem: `GATEWAY_CREDENTIAL_KEY: ${r.error.issues.map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`).join('; ')}` };
  return { ok: true, value: { id: r.data.id, secret: r.data.secret } };
}

/** Both GATEWAY_URL and GATEWAY_CREDENTIAL_KEY (inference on), neither (off: undefined), or a problem. */
export function gatewayOf(env: { GATEWAY_URL?: string; GATEWAY_CREDENTIAL_KEY?: string }, headersTimeoutMs: number): Parsed<GatewayConfig | undefined> {
  const { GATEWAY_URL: url, GATEWAY_CREDENTIAL_KEY: key } = env;
  if (blank(url) && blank(key)) return { ok: true, value: undefined };
  if (blank(url) || blank(key)) {
    return { ok: false, problem: `${blank(url) ? 'GATEWAY_URL' : 'GATEWAY_CREDENTIAL_KEY'} is missing: set GATEWAY_URL and GATEWAY_CREDENTIAL_KEY together, or neither (inference off)` };
  }
  const u = parseGatewayUrl(url);
  if (!u.ok) return u;
  const k = parseGatewayKey(key);
  if (!k.ok) return k;
  return { ok: true, value: { url: u.value, key: k.value, headersTimeoutMs } };
}

/** PUBLIC_URL: an https origin (a path, query or fragment is refused); unset or blank = undefined. */
export function publicUrlOf(text: string | undefined): Parsed<string | undefined> {
  if (blank(text)) return { ok: true, value: undefined };
  const u = asUrl(text.trim());
  if (!u || u.protocol !== 'https:' || u.username || u.password || u.pathname !== '/' || u.search || u.hash) {
    return { ok: false, problem: 'PUBLIC_URL must be an https origin without a path (e.g. https://api.example.com)' };
  }
  return { ok: true, value: u.origin };
}
