// ADMISSION_KEYS_JSON: {"<tenant>": <key> | [<key>, …]}, where a key is "<key of ≥ 16 chars>"
// or "sha256:<64 hex>". A tenant with several keys has them all active at once, so a key is
// rotated without downtime (docs/admission-api.md "API keys"). The whole document is validated
// before any of it is used: one bad entry refuses the configuration (never half-applied), and
// its problems name entries by position ("entry 2", "entry 2 key 3"), never by content. With
// `digestsOnly` (production) a plaintext key refuses the document too. Only SHA-256 digests are
// kept; lookup compares every key of every tenant in constant time, so timing reveals neither
// which tenant or which of its keys matched nor how much of a key did.
import { dns1123Label } from '../../schema/model-service.ts';
import { ambiguity } from '../middleware/unambiguous-json.ts';
import { constantTimeEqual, fromHex, sha256 } from './digest.ts';
import { keyIdOf } from './key-id.ts';

export const MIN_KEY_LENGTH = 16;
const DIGEST = /^sha256:([0-9a-fA-F]{64})$/;
const KEY_CHARS = /^[\x21-\x7e]+$/;

export class KeyConfigError extends Error {
  constructor(problems: string[]) {
    super(`ADMISSION_KEYS_JSON is invalid (no key is accepted until it is fixed): ${problems.join('; ')}`);
    this.name = 'KeyConfigError';
  }
}

export interface KeyEntry {
  tenant: string;
  /** The key's id (key-id.ts): what logs name it by. */
  keyId: string;
  digest: Uint8Array;
}

export interface KeyRing {
  readonly entries: ReadonlyArray<KeyEntry>;
}

export interface KeyRingOptions {
  /** Production: every key must be given as its "sha256:<64 hex>" digest; a plaintext key refuses the document. */
  digestsOnly?: boolean;
}

/** One key of the document, checked: its digest, or the problem (which never quotes the value). */
async function parseKey(value: unknown, digestsOnly: boolean): Promise<{ digest: Uint8Array } | { problem: string }> {
  if (typeof value !== 'string') return { problem: 'the key must be a string' };
  const m = DIGEST.exec(value);
  if (m?.[1]) return { digest: fromHex(m[1].toLowerCase()) };
  if (value.startsWith('sha256:')) return { problem: 'a digest must be "sha256:" followed by 64 hex digits' };
  if (digestsOnly) return { problem: 'a plaintext key is refused in production (MODELDOCK_ENV=production): give its "sha256:<64 hex>" digest' };
  if (value.length < MIN_KEY_LENGTH) return { problem: `the key is shorter than ${MIN_KEY_LENGTH} characters` };
  if (!KEY_CHARS.test(value)) return { problem: 'the key must be printable ASCII without spaces' };
  return { digest: await sha256(value) };
}

export async function parseKeyRing(raw: string | undefined, { digestsOnly = false }: KeyRingOptions = {}): Promise<KeyRing> {
  if (!raw || !raw.trim()) throw new KeyConfigError(['it is not set']);
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw new KeyConfigError(['it is not valid JSON']);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new KeyConfigError(['it must be a JSON object mapping tenant → key or list of keys']);
  // JSON.parse keeps the last of two equal names: a tenant written twice would silently lose keys.
  if (ambiguity(raw) !== undefined) throw new KeyConfigError(['a tenant is named twice (give its keys as one list), or a name is __proto__, constructor or prototype']);
  // Problems name entries by position only: a tenant and a key swapped by mistake would
  // otherwise put the key itself into a message.
  const problems: string[] = [];
  const found: (KeyEntry & { at: string })[] = [];
  let n = 0;
  for (const [tenant, value] of Object.entries(doc)) {
    const entry = `entry ${++n}`;
    if (!dns1123Label.safeParse(tenant).success) problems.push(`${entry}: the tenant name is not a DNS-1123 label`);
    let keys: [string, unknown][];
    if (typeof value === 'string') keys = [[entry, value]];
    else if (Array.isArray(value)) keys = value.map((v: unknown, i): [string, unknown] => [`${entry} key ${i + 1}`, v]);
    else {
      problems.push(`${entry}: the key must be a string or a list of strings`);
      continue;
    }
    if (keys.length === 0) problems.push(`${entry}: the list of keys is empty`);
    for (const [at, v] of keys) {
      const r = await parseKey(v, digestsOnly);
      if ('problem' in r) problems.push(`${at}: ${r.problem}`);
      else found.push({ tenant, digest: r.digest, keyId: await keyIdOf(r.digest), at });
    }
  }
  for (let i = 0; i < found.length; i++) {
    for (let j = i + 1; j < found.length; j++) {
      const [a, b] = [found[i], found[j]];
      if (a && b && constantTimeEqual(a.digest, b.digest)) problems.push(`${a.at} and ${b.at} share a key`);
    }
  }
  if (n === 0) problems.push('it configures no tenant');
  if (problems.length > 0) throw new KeyConfigError(problems);
  return { entries: found.map(({ tenant, keyId, digest }) => ({ tenant, keyId, digest })) };
}

export interface KeyMatch {
  tenant: string;
  keyId: string;
}

/** The tenant and key id of `token`, or undefined. Compares every key of every tenant whatever matches. */
export async function keyForToken(ring: KeyRing, token: string): Promise<KeyMatch | undefined> {
  const digest = await sha256(token);
  let match: KeyEntry | undefined;
  for (const e of ring.entries) {
    if (constantTimeEqual(e.digest, digest) && match === undefined) match = e;
  }
  return match && { tenant: match.tenant, keyId: match.keyId };
}

// One parsed ring per isolate, re-parsed only when the secret's text or the mode changes.
let cached: { raw: string | undefined; digestsOnly: boolean; ring: Promise<KeyRing> } | undefined;

export function keyRingFor(raw: string | undefined, { digestsOnly = false }: KeyRingOptions = {}): Promise<KeyRing> {
  if (!cached || cached.raw !== raw || cached.digestsOnly !== digestsOnly) {
    const ring = parseKeyRing(raw, { digestsOnly });
    ring.catch(() => undefined);
    cached = { raw, digestsOnly, ring };
  }
  return cached.ring;
}
