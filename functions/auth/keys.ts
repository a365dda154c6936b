// ADMISSION_KEYS_JSON: {"<tenant>": "<key of ≥ 16 chars>" | "sha256:<64 hex>"}. The whole
// document is validated before any of it is used: one bad entry refuses the configuration
// (never half-applied), and its problems name entries by position, never by content. Only
// SHA-256 digests are kept; lookup compares every entry in
// constant time, so timing reveals neither which tenant matched nor how much of a key did.
import { dns1123Label } from '../../schema/model-service.ts';
import { constantTimeEqual, fromHex, sha256 } from './digest.ts';

export const MIN_KEY_LENGTH = 16;
const DIGEST = /^sha256:([0-9a-fA-F]{64})$/;
const KEY_CHARS = /^[\x21-\x7e]+$/;

export class KeyConfigError extends Error {
  constructor(problems: string[]) {
    super(`ADMISSION_KEYS_JSON is invalid (no key is accepted until it is fixed): ${problems.join('; ')}`);
    this.name = 'KeyConfigError';
  }
}

export interface KeyRing {
  readonly entries: ReadonlyArray<{ tenant: string; digest: Uint8Array }>;
}

export async function parseKeyRing(raw: string | undefined): Promise<KeyRing> {
  if (!raw || !raw.trim()) throw new KeyConfigError(['it is not set']);
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw new KeyConfigError(['it is not valid JSON']);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new KeyConfigError(['it must be a JSON object mapping tenant → key']);
  // Problems name entries by position only: a tenant and a key swapped by mistake would
  // otherwise put the key itself into a message.
  const problems: string[] = [];
  const entries: { tenant: string; digest: Uint8Array; at: number }[] = [];
  let at = 0;
  for (const [tenant, value] of Object.entries(doc)) {
    at++;
    const entry = `entry ${at}`;
    if (!dns1123Label.safeParse(tenant).success) problems.push(`${entry}: the tenant name is not a DNS-1123 label`);
    if (typeof value !== 'string') {
      problems.push(`${entry}: the key must be a string`);
      continue;
    }
    const m = DIGEST.exec(value);
    if (m?.[1]) entries.push({ tenant, digest: fromHex(m[1].toLowerCase()), at });
    else if (value.startsWith('sha256:')) problems.push(`${entry}: a digest must be "sha256:" followed by 64 hex digits`);
    else if (value.length < MIN_KEY_LENGTH) problems.push(`${entry}: the key is shorter than ${MIN_KEY_LENGTH} characters`);
    else if (!KEY_CHARS.test(value)) problems.push(`${entry}: the key must be printable ASCII without spaces`);
    else entries.push({ tenant, digest: await sha256(value), at });
  }
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      const [a, b] = [entries[i], entries[j]];
      if (a && b && constantTimeEqual(a.digest, b.digest)) problems.push(`entries ${a.at} and ${b.at} share a key`);
    }
  }
  if (entries.length === 0 && problems.length === 0) problems.push('it configures no tenant');
  if (problems.length > 0) throw new KeyConfigError(problems);
  return { entries: entries.map(({ tenant, digest }) => ({ tenant, digest })) };
}

/** The tenant whose key is `token`, or undefined. Visits every entry whatever matches. */
export async function tenantForToken(ring: KeyRing, token: string): Promise<string | undefined> {
  const digest = await sha256(token);
  let found: string | undefined;
  for (const e of ring.entries) {
    if (constantTimeEqual(e.digest, digest) && found === undefined) found = e.tenant;
  }
  return found;
}

// One parsed ring per isolate, re-parsed only when the secret's text changes.
let cached: { raw: string | undefined; ring: Promise<KeyRing> } | undefined;

export function keyRingFor(raw: string | undefined): Promise<KeyRing> {
  if (!cached || cached.raw !== raw) {
    const ring = parseKeyRing(raw);
    ring.catch(() => undefined);
    cached = { raw, ring };
  }
  return cached.ring;
}
