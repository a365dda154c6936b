// A key's id: a stable, non-secret name for one API key, for logs and for operators. It is the
// first 12 hex digits of SHA-256 over the key's digest entry exactly as the key document writes
// it, "sha256:<64 lowercase hex>" (so `printf %s 'sha256:…' | sha256sum | cut -c1-12` gives it).
// A hash OF the digest, never a slice of it: a log line hands out no part of the value the Worker
// compares against, and no part of a plain sha256(key) another system might store. 48 bits are
// enough to tell a tenant's keys apart; checking a guessed key against an id costs what checking
// it against the digest does (one more hash), which is hopeless for the random 192-bit keys that
// `npm run tenant -- key` makes.
import { sha256Hex, toHex } from './digest.ts';

export const KEY_ID_HEX_DIGITS = 12;

export async function keyIdOf(digest: Uint8Array): Promise<string> {
  return (await sha256Hex(`sha256:${toHex(digest)}`)).slice(0, KEY_ID_HEX_DIGITS);
}
