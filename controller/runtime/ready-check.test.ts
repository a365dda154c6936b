import { describe, expect, it } from 'vitest';
import { cachedCheck } from './ready-check.ts';

describe('cachedCheck', () => {
  it('answers ok when the probe resolves and reuses the answer for ttlMs', async () => {
    let t = 0;
    let probes = 0;
    const check = cachedCheck('database', async () => void probes++, { ttlMs: 5000, now: () => t });
    expect(await check()).toEqual({ ok: true });
    t = 4999;
    expect(await check()).toEqual({ ok: true });
    expect(probes).toBe(1);
    t = 5000;
    await check();
    expect(probes).toBe(2);
  });
  it('a failing probe → not ok with a short reason; the error only in detail', async () => {
    const check = cachedCheck('database', async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:1');
    });
    expect(await check()).toEqual({ ok: false, reason: 'database did not answer', detail: 'connect ECONNREFUSED 127.0.0.1:1' });
  });
  it('a probe that never answers fails at the deadline', async () => {
    const check = cachedCheck('database', () => new Promise(() => undefined), { timeoutMs: 20 });
    expect(await check()).toMatchObject({ ok: false, detail: 'no answer within 20 ms' });
  });
  it('concurrent callers share one probe', async () => {
    let probes = 0;
    let release!: () => void;
    const check = cachedCheck('database', () => {
      probes++;
      return new Promise<void>((r) => (release = r));
    });
    const all = Promise.all([check(), check(), check()]);
    release();
    expect((await all).every((r) => r.ok)).toBe(true);
    expect(probes).toBe(1);
  });
  it('recovers: a failure is cached only for ttlMs', async () => {
    let t = 0;
    let up = false;
    const check = cachedCheck('database', async () => {
      if (!up) throw new Error('down');
    }, { ttlMs: 1000, now: () => t });
    expect((await check()).ok).toBe(false);
    up = true;
    expect((await check()).ok).toBe(false);
    t = 1000;
    expect((await check()).ok).toBe(true);
  });
});
