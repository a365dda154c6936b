import { describe, expect, it } from 'vitest';
import { StatusHold } from './status-hold.ts';

describe('StatusHold', () => {
  const setup = () => {
    const c = { t: 1000 };
    return { c, h: new StatusHold({ pendingMs: 10_000, progressingMs: 2000, now: () => c.t }) };
  };

  it('holds Pending up to its bound, counted from the first held change; per key', () => {
    const { c, h } = setup();
    expect(h.holdMs('ns/a', 'Pending')).toBe(10_000);
    c.t += 4000;
    expect(h.holdMs('ns/a', 'Pending')).toBe(6000); // a newer Pending change does not restart it
    expect(h.holdMs('ns/b', 'Pending')).toBe(10_000);
    c.t += 6000;
    expect(h.holdMs('ns/a', 'Pending')).toBe(0); // no report within the bound: write it
    expect(h.size).toBe(1);
    c.t += 10;
    expect(h.holdMs('ns/a', 'Pending')).toBe(10_000); // the next change begins a new hold
  });

  it('holds Progressing up to its own bound from the same start: after a long Pending hold, the first report is written at once', () => {
    const { c, h } = setup();
    expect(h.holdMs('ns/a', 'Progressing')).toBe(2000);
    c.t += 500;
    expect(h.holdMs('ns/a', 'Progressing')).toBe(1500);
    expect(h.holdMs('ns/b', 'Pending')).toBe(10_000);
    c.t += 3000;
    expect(h.holdMs('ns/b', 'Progressing')).toBe(0); // held 3.5 s already
  });

  it('never holds Running, Degraded, Terminating or no phase, and they end a hold', () => {
    const { h } = setup();
    for (const phase of ['Running', 'Degraded', 'Terminating', undefined] as const) {
      expect(h.holdMs('ns/a', 'Progressing')).toBeGreaterThan(0);
      expect(h.holdMs('ns/a', phase), String(phase)).toBe(0);
      expect(h.size).toBe(0);
    }
  });

  it('release drops a hold (written, unchanged or gone); a bound of 0 holds nothing', () => {
    const { c, h } = setup();
    expect(h.holdMs('ns/a', 'Pending')).toBe(10_000);
    expect(h.release('ns/a')).toBe(0);
    expect(h.size).toBe(0);
    c.t += 100;
    expect(h.holdMs('ns/a', 'Pending')).toBe(10_000);
    const none = new StatusHold({ pendingMs: 0, progressingMs: 0, now: () => c.t });
    expect(none.holdMs('ns/a', 'Pending')).toBe(0);
    expect(none.holdMs('ns/a', 'Progressing')).toBe(0);
  });
});
