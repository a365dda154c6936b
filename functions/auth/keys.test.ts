import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { constantTimeEqual } from './digest.ts';
import { keyIdOf } from './key-id.ts';
import { KeyConfigError, keyForToken, keyRingFor, parseKeyRing, type KeyEntry } from './keys.ts';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
/** The key id as an operator computes it: sha256 of the digest entry "sha256:<hex>", 12 hex digits. */
const idOf = (key: string) => hex(`sha256:${hex(key)}`).slice(0, 12);
const OLD = 'acme-old-key-0123456789';
const NEW = 'acme-new-key-0123456789';

const refusal = async (raw: string, digestsOnly = false) => {
  const err = await parseKeyRing(raw, { digestsOnly }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KeyConfigError);
  expect((err as Error).message).toMatch(/no key is accepted/);
  return (err as Error).message;
};

describe('parseKeyRing', () => {
  it('accepts plain keys (≥ 16 chars) and sha256 digests', async () => {
    const ring = await parseKeyRing(JSON.stringify({ acme: 'a'.repeat(16), globex: `sha256:${hex('globex-secret-key-1')}` }));
    expect((await keyForToken(ring, 'a'.repeat(16)))?.tenant).toBe('acme');
    expect((await keyForToken(ring, 'globex-secret-key-1'))?.tenant).toBe('globex');
    expect(await keyForToken(ring, 'a'.repeat(15))).toBeUndefined();
    expect(await keyForToken(ring, `sha256:${hex('globex-secret-key-1')}`)).toBeUndefined(); // a digest is not a key
  });

  it('accepts several keys per tenant, in either form: each authenticates the same tenant under its own key id', async () => {
    const ring = await parseKeyRing(JSON.stringify({ acme: [OLD, `sha256:${hex(NEW)}`], globex: 'globex-secret-key-1' }));
    expect(await keyForToken(ring, OLD)).toEqual({ tenant: 'acme', keyId: idOf(OLD) });
    expect(await keyForToken(ring, NEW)).toEqual({ tenant: 'acme', keyId: idOf(NEW) });
    expect(await keyForToken(ring, 'globex-secret-key-1')).toEqual({ tenant: 'globex', keyId: idOf('globex-secret-key-1') });
    expect(await keyForToken(ring, 'acme-third-key-0123456789')).toBeUndefined();
    // Removing the old key (rotation's last step) leaves the new one working.
    const rotated = await parseKeyRing(JSON.stringify({ acme: [`sha256:${hex(NEW)}`], globex: 'globex-secret-key-1' }));
    expect(await keyForToken(rotated, OLD)).toBeUndefined();
    expect(await keyForToken(rotated, NEW)).toEqual({ tenant: 'acme', keyId: idOf(NEW) });
  });

  it('a key id is 12 hex digits of sha256 over the digest entry: the same for the key and its digest, no part of the digest', async () => {
    const ring = await parseKeyRing(JSON.stringify({ acme: OLD, globex: `sha256:${hex(NEW).toUpperCase()}` }));
    const ids = ring.entries.map((e) => e.keyId);
    expect(ids).toEqual([idOf(OLD), idOf(NEW)]);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/);
    for (const [key, id] of [[OLD, idOf(OLD)], [NEW, idOf(NEW)]] as const) {
      expect(hex(key)).not.toContain(id);
      expect(id).not.toBe(hex(key).slice(0, 12));
    }
    expect(await keyIdOf(Uint8Array.from(Buffer.from(hex(OLD), 'hex')))).toBe(idOf(OLD));
  });

  it.each([
    ['unset', undefined, /not set/],
    ['not JSON', '{acme:', /not valid JSON/],
    ['an array', '["a"]', /JSON object/],
    ['empty', '{}', /no tenant/],
    ['a short key', JSON.stringify({ acme: 'a'.repeat(16), globex: 'short' }), /entry 2: the key is shorter than 16/],
    ['a bad digest', JSON.stringify({ acme: 'sha256:abc' }), /64 hex/],
    ['a bad tenant name', JSON.stringify({ 'Acme Corp': 'a'.repeat(16) }), /DNS-1123/],
    ['a non-string key', JSON.stringify({ acme: 1234 }), /entry 1: the key must be a string or a list of strings/],
    ['an object of keys', JSON.stringify({ acme: { a: OLD } }), /entry 1: the key must be a string or a list of strings/],
    ['a key with spaces', JSON.stringify({ acme: 'a key with spaces!!' }), /printable ASCII/],
    ['a shared key', JSON.stringify({ acme: 'x'.repeat(20), globex: `sha256:${hex('x'.repeat(20))}` }), /entry 1 and entry 2 share a key/],
    ['an empty list', JSON.stringify({ acme: [], globex: OLD }), /entry 1: the list of keys is empty/],
    ['a key twice in one list', JSON.stringify({ acme: [OLD, `sha256:${hex(OLD)}`] }), /entry 1 key 1 and entry 1 key 2 share a key/],
    ['a key in two tenants\' lists', JSON.stringify({ acme: [NEW, OLD], globex: [`sha256:${hex(OLD)}`] }), /entry 1 key 2 and entry 2 key 1 share a key/],
    ['a non-string in a list', JSON.stringify({ acme: [OLD, 5] }), /entry 1 key 2: the key must be a string/],
    ['a short key in a list', JSON.stringify({ acme: [OLD, 'short'] }), /entry 1 key 2: the key is shorter than 16/],
    ['a bad digest in a list', JSON.stringify({ acme: [OLD, 'sha256:abc'] }), /entry 1 key 2: a digest must be/],
    ['a tenant named twice', `{"acme":"${OLD}","acme":"${NEW}"}`, /a tenant is named twice/],
  ])('refuses the whole configuration when it is %s', async (_what, raw, message) => {
    expect(await refusal(raw as string)).toMatch(message);
  });

  it('in production (digests only) a plaintext key refuses the whole document, by position; digests are accepted', async () => {
    const raw = JSON.stringify({ acme: [`sha256:${hex(NEW)}`, OLD], globex: `sha256:${hex('globex-secret-key-1')}` });
    const message = await refusal(raw, true);
    expect(message).toMatch(/entry 1 key 2: a plaintext key is refused in production/);
    expect(message).not.toContain(OLD);
    expect((await parseKeyRing(raw)).entries).toHaveLength(3); // the same document outside production
    const digests = await parseKeyRing(JSON.stringify({ acme: [`sha256:${hex(NEW)}`, `sha256:${hex(OLD)}`] }), { digestsOnly: true });
    expect(await keyForToken(digests, OLD)).toEqual({ tenant: 'acme', keyId: idOf(OLD) });
    expect(await refusal(JSON.stringify({ acme: 'short' }), true)).toMatch(/entry 1: a plaintext key is refused in production/);
  });

  it('never echoes a key in its error message', async () => {
    for (const [raw, digestsOnly] of [
      [JSON.stringify({ acme: 'tiny-secret' }), false],
      [JSON.stringify({ acme: [OLD, 'tiny-secret'] }), false],
      [JSON.stringify({ 'tiny-secret!': [OLD] }), false],
      [`{"acme":"tiny-secret","acme":"${OLD}"}`, false],
      [JSON.stringify({ acme: [`sha256:${hex(NEW)}`, 'tiny-secret-but-long-enough'] }), true],
    ] as const) {
      const message = await refusal(raw, digestsOnly);
      for (const secret of ['tiny-secret', OLD]) expect(message).not.toContain(secret);
    }
  });
});

describe('keyForToken', () => {
  it('compares the token with every key of every tenant, whichever matches', async () => {
    const ring = await parseKeyRing(JSON.stringify({ acme: [OLD, NEW], globex: 'globex-secret-key-1', initech: 'initech-secret-key-1' }));
    let reads = 0;
    const counted = {
      entries: ring.entries.map((e): KeyEntry => ({
        tenant: e.tenant,
        keyId: e.keyId,
        get digest() {
          reads++;
          return e.digest;
        },
      })),
    };
    for (const token of [OLD, NEW, 'initech-secret-key-1', 'nobody-knows-this-key']) {
      reads = 0;
      await keyForToken(counted, token);
      expect(reads, token).toBe(4);
    }
  });
});

describe('keyRingFor', () => {
  it('parses again when the mode changes: the same text is refused once digests only are required', async () => {
    const raw = JSON.stringify({ acme: OLD });
    expect((await keyRingFor(raw)).entries).toHaveLength(1);
    await expect(keyRingFor(raw, { digestsOnly: true })).rejects.toThrow(/plaintext key is refused in production/);
    expect((await keyRingFor(raw, { digestsOnly: false })).entries).toHaveLength(1);
  });
});

describe('constantTimeEqual', () => {
  it('compares digests exactly', () => {
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
