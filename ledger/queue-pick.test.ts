import { describe, expect, it } from 'vitest';
import type { Amounts } from '../schema/model-service.ts';
import { estimateWait, everFits, pickFromQueue, shortfalls, type QueuedItem, type ReleaseRate, type TenantQuota } from './queue-pick.ts';

const cpu = (n: number): Amounts => ({ cpu: n, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 });
const quota = (hard: number, used: number, count = 100): TenantQuota => ({ cpu: { hard, used }, modelservices: { hard: count, used: 0 } });
const item = (id: string, seq: number, size: number, bypassed = 0): QueuedItem => ({ id, seq, amounts: cpu(size), bypassed, expiresAt: null });

describe('shortfalls', () => {
  it('names each short resource and by how much; a missing row is quota 0', () => {
    expect(shortfalls({ cpu: 3000, memory: 100, 'nvidia.com/gpu': 1, modelservices: 1 }, { cpu: { hard: 4000, used: 2000 }, memory: { hard: 100, used: 0 }, modelservices: { hard: 1, used: 0 } })).toEqual([
      { resource: 'cpu', requested: 3000, available: 2000, short: 1000 },
      { resource: 'nvidia.com/gpu', requested: 1, available: 0, short: 1 },
    ]);
    expect(shortfalls({ cpu: 1, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 }, { cpu: { hard: 1, used: 5 } })).toEqual([
      { resource: 'cpu', requested: 1, available: 0, short: 1 },
      { resource: 'modelservices', requested: 1, available: 0, short: 1 },
    ]);
  });
  it('everFits: within the hard limits, whatever is used now', () => {
    expect(everFits(cpu(4), quota(4, 4))).toBe(true);
    expect(everFits(cpu(5), quota(4, 0))).toBe(false);
    expect(everFits(cpu(1), quota(4, 0, 0))).toBe(false);
  });
});

describe('pickFromQueue', () => {
  it('admits the head when it fits (strict FIFO: never a later one before it)', () => {
    expect(pickFromQueue([item('a', 1, 2), item('b', 2, 1)], quota(4, 2), 3)).toEqual({ type: 'admit', id: 'a', amounts: cpu(2), passes: null });
  });
  it('lets a later, smaller one pass a head that does not fit, at most maxBypass times', () => {
    const q = quota(4, 2);
    expect(pickFromQueue([item('big', 1, 3, 0), item('small', 2, 1)], q, 2)).toEqual({ type: 'admit', id: 'small', amounts: cpu(1), passes: 'big' });
    expect(pickFromQueue([item('big', 1, 3, 1), item('small', 2, 1)], q, 2)).toMatchObject({ type: 'admit', id: 'small', passes: 'big' });
    expect(pickFromQueue([item('big', 1, 3, 2), item('small', 2, 1)], q, 2)).toEqual({
      type: 'wait',
      head: 'big',
      held: true,
      short: [{ resource: 'cpu', requested: 3, available: 2, short: 1 }],
    });
  });
  it('maxBypass 0 is strict FIFO: the head holds everything back', () => {
    expect(pickFromQueue([item('big', 1, 3), item('small', 2, 1)], quota(4, 2), 0)).toMatchObject({ type: 'wait', head: 'big', held: true });
  });
  it('waits (not held) when nothing behind the head fits either', () => {
    expect(pickFromQueue([item('big', 1, 3), item('mid', 2, 3)], quota(4, 2), 3)).toMatchObject({ type: 'wait', head: 'big', held: false });
  });
  it('an admission beyond the hard limits is no head: it holds nothing back and is never picked', () => {
    expect(pickFromQueue([item('huge', 1, 9), item('a', 2, 1)], quota(4, 2), 0)).toEqual({ type: 'admit', id: 'a', amounts: cpu(1), passes: null });
    expect(pickFromQueue([item('huge', 1, 9)], quota(4, 0), 3)).toEqual({ type: 'empty' });
    expect(pickFromQueue([], quota(4, 0), 3)).toEqual({ type: 'empty' });
  });
  it('counts the modelservices limit like any resource', () => {
    expect(pickFromQueue([item('a', 1, 1)], { cpu: { hard: 4, used: 0 }, modelservices: { hard: 2, used: 2 } }, 3)).toMatchObject({ type: 'wait', head: 'a' });
  });
});

describe('estimateWait', () => {
  const rate = (released: number, spanSeconds: number, releases = 2): ReleaseRate => ({ windowSeconds: 600, releases, spanSeconds, released: cpu(released) });
  it('extrapolates the tenant release rate to what this admission and those ahead still need', () => {
    // needs 3, 1 free: 2 more at 4 per 20 s = 10 s.
    expect(estimateWait(cpu(3), quota(4, 3), rate(4, 20))).toMatchObject({ seconds: 10, method: 'release-rate' });
  });
  it('0 when the quota it needs is free now', () => {
    expect(estimateWait(cpu(1), quota(4, 0), rate(0, 0, 0))).toMatchObject({ seconds: 0 });
  });
  it('null with the reason when nothing was released in the window', () => {
    const e = estimateWait(cpu(3), quota(4, 4), rate(0, 0, 0));
    expect(e.seconds).toBeNull();
    expect(e).toMatchObject({ reason: expect.stringContaining('no rate') });
  });
  it('null when the short resource was never released (another was)', () => {
    const e = estimateWait({ cpu: 0, memory: 0, 'nvidia.com/gpu': 1, modelservices: 1 }, { 'nvidia.com/gpu': { hard: 1, used: 1 }, modelservices: { hard: 5, used: 0 } }, rate(4, 10));
    expect(e).toMatchObject({ seconds: null, reason: expect.stringContaining('nvidia.com/gpu') });
  });
  it('a span under a second counts as one second', () => {
    expect(estimateWait(cpu(4), quota(4, 4), rate(2, 0.1))).toMatchObject({ seconds: 2 });
  });
});
