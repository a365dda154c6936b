import { describe, expect, it } from 'vitest';
import { TokenBucket } from './rate-limit.ts';

describe('TokenBucket', () => {
  it('lets a burst through, then paces at qps, FIFO', async () => {
    let now = 0;
    const slept: number[] = [];
    const bucket = new TokenBucket({
      qps: 10,
      burst: 3,
      now: () => now,
      sleep: async (ms) => {
        slept.push(Math.round(ms));
        now += ms;
      },
    });
    for (let i = 0; i < 5; i++) await bucket.take();
    expect(slept).toEqual([100, 100]);
    now += 10_000; // refills, but never above the burst
    slept.length = 0;
    for (let i = 0; i < 4; i++) await bucket.take();
    expect(slept).toEqual([100]);
  });

  it('rejects nonsense settings', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow();
    expect(() => new TokenBucket({ qps: 1, burst: 0 })).toThrow();
  });
});
