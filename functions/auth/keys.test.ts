import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { constantTimeEqual } from './digest.ts';
import { KeyConfigError, parseKeyRing, tenantForToken } from './keys.ts';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('parseKeyRing', () => {
  it('accepts plain keys (≥ 16 chars) and sha256 digests', async () => {
    const ring = await parseKeyRing(JSON.stringify({ acme: 'a'.repeat(16), globex: `sha256:${hex('globex-secret-key-1')}` }));
    expect(await tenantForToken(ring, 'a'.repeat(16))).toBe('acme');
    expect(await tenantForToken(ring, 'globex-secret-key-1')).toBe('globex');
    expect(await tenantForToken(ring, 'a'.repeat(15))).toBeUndefined();
    expect(await tenantForToken(ring, `sha256:${hex('globex-secret-key-1')}`)).toBeUndefined(); // a digest is not a key
  });

  it.each([
    ['unset', undefined, /not set/],
    ['not JSON', '{acme:', /not valid JSON/],
    ['an array', '["a"]', /JSON object/],
    ['empty', '{}', /no tenant/],
    ['a short key', JSON.stringify({ acme: 'a'.repeat(16), globex: 'short' }), /entry 2: the key is shorter than 16/],
    ['a bad digest', JSON.stringify({ acme: 'sha256:abc' }), /64 hex/],
    ['a bad tenant name', JSON.stringify({ 'Acme Corp': 'a'.repeat(16) }), /DNS-1123/],
    ['a non-string key', JSON.stringify({ acme: 1234 }), /must be a string/],
    ['a key with spaces', JSON.stringify({ acme: 'a key with spaces!!' }), /printable ASCII/],
    ['a shared key', JSON.stringify({ acme: 'x'.repeat(20), globex: `sha256:${hex('x'.repeat(20))}` }), /share a key/],
  ])('refuses the whole configuration when it is %s', async (_what, raw, message) => {
    const err = await parseKeyRing(raw).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeyConfigError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toMatch(/no key is accepted/);
  });

  it('never echoes a key in its error message', async () => {
    const err = (await parseKeyRing(JSON.stringify({ acme: 'tiny-secret' })).catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain('tiny-secret');
  });
});

describe('constantTimeEqual', () => {
  it('compares digests exactly', () => {
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
