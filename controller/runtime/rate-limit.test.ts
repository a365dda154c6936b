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

  it('serves high-priority waiters before normal ones, FIFO within each', async () => {
    let now = 0;
    const bucket = new TokenBucket({ qps: 10, burst: 1, now: () => now, sleep: async (ms) => void (now += ms) });
    await bucket.take(); // the burst is spent
    const order: string[] = [];
    const all = [
      bucket.take().then(() => order.push('n1')),
      bucket.take().then(() => order.push('n2')),
      bucket.take('high').then(() => order.push('h1')),
      bucket.take('high').then(() => order.push('h2')),
    ];
    await Promise.all(all);
    expect(order).toEqual(['h1', 'h2', 'n1', 'n2']);
    expect(now).toBe(400); // still paced at qps
  });

  it('rejects nonsense settings', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow();
    expect(() => new TokenBucket({ qps: 1, burst: 0 })).toThrow();
  });
});
