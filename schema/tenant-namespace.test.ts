import { describe, expect, it } from 'vitest';
import { dns1123Label } from './model-service.ts';
import { DEFAULT_TENANT_NAMESPACE_PREFIX, invalidNamespacePrefix, tenantNamespace } from './tenant-namespace.ts';

describe('tenantNamespace', () => {
  it('is <prefix><tenant> while that fits a DNS-1123 label (md- by default)', () => {
    expect(DEFAULT_TENANT_NAMESPACE_PREFIX).toBe('md-');
    expect(tenantNamespace('acme')).toBe('md-acme');
    expect(tenantNamespace('acme', 'e2e-1a2b3c-')).toBe('e2e-1a2b3c-acme');
    expect(tenantNamespace('a'.repeat(60))).toBe(`md-${'a'.repeat(60)}`); // exactly 63
  });

  it('past 63 characters: the prefix, as much of the tenant as fits, and 10 hex of its SHA-256 — deterministic, distinct, a valid name', () => {
    const long = 'a'.repeat(61);
    const other = `${'a'.repeat(60)}b`;
    const name = tenantNamespace(long);
    expect(name).toHaveLength(63);
    expect(name).toMatch(/^md-a{49}-[0-9a-f]{10}$/);
    expect(tenantNamespace(long)).toBe(name);
    expect(tenantNamespace(other)).not.toBe(name);
    expect(dns1123Label.safeParse(name).success).toBe(true);
  });

  it('a cut that ends in "-" loses it (a label cannot end in "-")', () => {
    const tenant = `${'a'.repeat(48)}-${'b'.repeat(20)}`;
    expect(tenantNamespace(tenant)).toMatch(/^md-a{48}-[0-9a-f]{10}$/);
    expect(dns1123Label.safeParse(tenantNamespace(tenant)).success).toBe(true);
  });
});

describe('invalidNamespacePrefix', () => {
  it.each([
    ['md-', undefined],
    ['team1-', undefined],
    ['', 'must be lower-case'],
    ['MD-', 'must be lower-case'],
    ['-md', 'must be lower-case'],
    ['md_', 'must be lower-case'],
    ['a'.repeat(52), 'longer than 51'],
  ])('%j → %s', (prefix, why) => {
    const got = invalidNamespacePrefix(prefix);
    if (why === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(why);
  });

  it('the longest accepted prefix still leaves room for the hash form', () => {
    const prefix = 'p'.repeat(51);
    expect(invalidNamespacePrefix(prefix)).toBeUndefined();
    expect(tenantNamespace('x'.repeat(63), prefix)).toMatch(/^p{51}x-[0-9a-f]{10}$/);
  });
});
