import { describe, expect, it } from 'vitest';
import { cpuMillis, memoryMiB, parseQuantity, QUANTITY_PATTERN, QuantityError, wholeCount } from './quantity.ts';

describe('cpuMillis', () => {
  it.each([
    ['1', 1000],
    ['1.5', 1500],
    ['500m', 500],
    ['0.1', 100],
    ['.5', 500],
    ['1001u', 2], // rounded up
    ['1n', 1],
    ['2k', 2_000_000],
    ['1e3', 1_000_000],
    ['1e-3', 1],
    ['0', 0],
    ['+3', 3000],
  ])('%s → %d millicores', (q, want) => expect(cpuMillis(q)).toBe(want));
});

describe('memoryMiB', () => {
  it.each([
    ['1Gi', 1024],
    ['512Mi', 512],
    ['1G', 954], // 1e9 bytes = 953.67 MiB, rounded up
    ['1048576', 1],
    ['1', 1],
    ['1.5Gi', 1536],
    ['1Ti', 1024 * 1024],
    ['0', 0],
  ])('%s → %d MiB', (q, want) => expect(memoryMiB(q)).toBe(want));
});

describe('wholeCount', () => {
  it('accepts whole numbers in any notation', () => {
    expect(wholeCount('2')).toBe(2);
    expect(wholeCount('2000m')).toBe(2);
    expect(wholeCount('1e1')).toBe(10);
  });
  it('rejects fractions', () => expect(() => wholeCount('1.5')).toThrow(/whole/));
});

describe('parseQuantity rejects', () => {
  it.each(['', '-1', 'abc', '1Xi', '1.2.3', '1 Gi', '1e', '1e99', 'Gi', '0x10', '1_000', '9'.repeat(65)])('%j', (q) => {
    expect(() => parseQuantity(q)).toThrow(QuantityError);
  });
  it('values above the maximum', () => {
    expect(() => cpuMillis('1E')).toThrow(/maximum/);
    expect(() => memoryMiB('100Ei')).toThrow(/maximum/);
  });
});

// Cases that pin what the mutation run (npm run mutation, docs/mutation.md) found unpinned.
describe('quantity edges', () => {
  it('parses into an exact fraction', () => {
    expect(parseQuantity('1.25')).toEqual({ num: 125n, den: 100n });
    expect(parseQuantity('3Ki')).toEqual({ num: 3072n, den: 1n });
    expect(parseQuantity('2m')).toEqual({ num: 2n, den: 1000n });
    expect(parseQuantity('2e2')).toEqual({ num: 200n, den: 1n });
    expect(parseQuantity('2E-2')).toEqual({ num: 2n, den: 100n });
    expect(parseQuantity('5.')).toEqual({ num: 5n, den: 1n });
  });
  it.each([
    ['Ki', 1024],
    ['Mi', 1024 ** 2],
    ['Gi', 1024 ** 3],
    ['Ti', 1024 ** 4],
    ['Pi', 1024 ** 5],
  ])('binary suffix %s', (suffix, factor) => {
    expect(parseQuantity(`1${suffix}`)).toEqual({ num: BigInt(factor), den: 1n });
  });
  it('Ei is 2^60', () => expect(parseQuantity('1Ei')).toEqual({ num: 2n ** 60n, den: 1n }));
  it.each([
    ['n', -9],
    ['u', -6],
    ['m', -3],
    ['k', 3],
    ['M', 6],
    ['G', 9],
    ['T', 12],
    ['P', 15],
    ['E', 18],
  ])('decimal suffix %s is 10^%d', (suffix, exp) => {
    expect(parseQuantity(`1${suffix}`)).toEqual(exp >= 0 ? { num: 10n ** BigInt(exp), den: 1n } : { num: 1n, den: 10n ** BigInt(-exp) });
  });
  it('64 characters are allowed, 65 are too long', () => {
    expect(parseQuantity('1'.repeat(64)).den).toBe(1n);
    expect(() => parseQuantity('1'.repeat(65))).toThrow('quantity is too long');
  });
  it('exponents up to ±30', () => {
    expect(parseQuantity('1e30')).toEqual({ num: 10n ** 30n, den: 1n });
    expect(parseQuantity('1e-30')).toEqual({ num: 1n, den: 10n ** 30n });
    expect(() => parseQuantity('1e31')).toThrow('"1e31" is out of range');
    expect(() => parseQuantity('1e-31')).toThrow('"1e-31" is out of range');
  });
  it('says why it refuses', () => {
    expect(() => parseQuantity('abc')).toThrow('"abc" is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)');
    expect(() => parseQuantity('-1')).toThrow('"-1" is negative');
    expect(() => wholeCount('1.5')).toThrow('"1.5" must be a whole number');
    const err = (() => {
      try {
        parseQuantity('x');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(QuantityError);
    expect((err as Error).name).toBe('QuantityError');
  });
  it('the maximum is allowed, one unit more is not', () => {
    expect(cpuMillis('1M')).toBe(1_000_000_000);
    expect(() => cpuMillis('1000000001m')).toThrow('"1000000001m" is larger than the maximum allowed');
    expect(memoryMiB('1000000000Mi')).toBe(1_000_000_000);
    expect(() => memoryMiB('1000000001Mi')).toThrow(/maximum/);
    expect(wholeCount('1000000')).toBe(1_000_000);
    expect(() => wholeCount('1000001')).toThrow('"1000001" is larger than the maximum allowed');
  });
  it('rounds up only what is not exact', () => {
    expect(cpuMillis('1m')).toBe(1);
    expect(cpuMillis('1500u')).toBe(2);
    expect(memoryMiB('1Mi')).toBe(1);
    expect(memoryMiB('1048577')).toBe(2);
    expect(memoryMiB('1Ki')).toBe(1);
  });
  it('QUANTITY_PATTERN is the same grammar without group names (for the CRD and zod)', () => {
    expect(QUANTITY_PATTERN).not.toContain('?<');
    const re = new RegExp(QUANTITY_PATTERN);
    for (const q of ['1', '500m', '4Gi', '1e3', '.5', '+1']) expect(re.test(q), q).toBe(true);
    for (const q of ['abc', '1Xi', '1 Gi', '', 'Gi']) expect(re.test(q), q).toBe(false);
  });
});
