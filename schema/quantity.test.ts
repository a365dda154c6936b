import { describe, expect, it } from 'vitest';
import { cpuMillis, memoryMiB, parseQuantity, QuantityError, wholeCount } from './quantity.ts';

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
