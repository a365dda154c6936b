import { describe as suite, expect, it } from 'vitest';
import { fmt, percentile, ratio, summarize, verdict } from './stats.ts';

suite('percentile (nearest rank)', () => {
  it.each([
    [[5], 50, 5],
    [[1, 2, 3, 4], 50, 2],
    [[4, 3, 2, 1], 99, 4],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[10, 20], 1, 10],
  ])('%j p%d = %d', (values, p, want) => expect(percentile(values, p)).toBe(want));

  it('is NaN for no values', () => expect(percentile([], 50)).toBeNaN());
});

suite('summaries', () => {
  it('throughput is operations over wall time, not over summed latencies', () => {
    const s = summarize([100, 100, 100, 100], 200); // 4 concurrent ops in 200 ms
    expect(s.perSecond).toBe(20);
    expect(s.p50).toBe(100);
  });

  it('ratio refuses a zero baseline', () => {
    expect(ratio(1, 0)).toBeNaN();
    expect(ratio(3, 4)).toBe(0.75);
  });

  it('verdict compares in the stated direction', () => {
    expect(verdict(0.7, 0.7, true)).toBe('ok');
    expect(verdict(0.69, 0.7, true)).toBe('MISS');
    expect(verdict(1.31, 1.3, false)).toBe('MISS');
    expect(verdict(Number.NaN, 1, false)).toBe('MISS');
  });

  it('formats to three significant digits', () => {
    expect(fmt(0.23456)).toBe('0.235');
    expect(fmt(137.4)).toBe('137');
    expect(fmt(12345.6)).toBe('12346');
  });
});
