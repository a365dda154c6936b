import { describe, expect, it } from 'vitest';
import { EventCorrelator } from './event-correlator.ts';

const clock = (start = 1_000_000) => {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('EventCorrelator (client-go EventCorrelator defaults)', () => {
  it('sends an event once within the de-duplication window, again after it', () => {
    const c = clock();
    const ec = new EventCorrelator({ now: c.now, dedupWindowMs: 1000 });
    expect(ec.decide('u', 'Normal', 'Running', '1/1')).toEqual({ send: true, note: '1/1', aggregated: false });
    expect(ec.decide('u', 'Normal', 'Running', '1/1')).toEqual({ send: false, why: 'duplicate' });
    expect(ec.decide('u', 'Warning', 'Degraded', 'x').send).toBe(true);
    expect(ec.decide('v', 'Normal', 'Running', '1/1').send).toBe(true); // another object
    c.advance(1001);
    expect(ec.decide('u', 'Normal', 'Running', '1/1').send).toBe(true);
  });

  it('aggregates more than 10 similar events (same object, type, reason) into one combined event', () => {
    const ec = new EventCorrelator({ now: clock().now });
    const sent = Array.from({ length: 14 }, (_, i) => ec.decide('u', 'Warning', 'ChildConflict', `conflict ${i}`));
    expect(sent.slice(0, 10).every((d) => d.send && !d.aggregated)).toBe(true);
    expect(sent[10]).toEqual({ send: true, note: '(combined from similar events): conflict 10', aggregated: true });
    expect(sent.slice(11).every((d) => !d.send && d.why === 'duplicate')).toBe(true);
  });

  it('starts a new aggregation window after 10 minutes', () => {
    const c = clock();
    const ec = new EventCorrelator({ now: c.now, dedupWindowMs: 1 });
    for (let i = 0; i < 11; i++) ec.decide('u', 'Warning', 'R', `n${i}`);
    c.advance(600_001);
    expect(ec.decide('u', 'Warning', 'R', 'fresh')).toEqual({ send: true, note: 'fresh', aggregated: false });
  });

  it('lets one object send 25 events, then one per 5 minutes', () => {
    const c = clock();
    const ec = new EventCorrelator({ now: c.now, maxSimilar: 1000 });
    const burst = Array.from({ length: 30 }, (_, i) => ec.decide('u', 'Normal', `R${i}`, 'n').send);
    expect(burst.filter(Boolean)).toHaveLength(25);
    expect(ec.decide('other', 'Normal', 'R', 'n').send).toBe(true); // per object
    c.advance(299_000);
    expect(ec.decide('u', 'Normal', 'Rx', 'n')).toEqual({ send: false, why: 'spam' });
    c.advance(2_000);
    expect(ec.decide('u', 'Normal', 'Ry', 'n').send).toBe(true);
  });

  it('keeps its tables bounded (LRU)', () => {
    const ec = new EventCorrelator({ now: clock().now, maxEntries: 2 });
    ec.decide('a', 'Normal', 'R', 'n');
    ec.decide('b', 'Normal', 'R', 'n');
    ec.decide('c', 'Normal', 'R', 'n'); // evicts a
    expect(ec.decide('a', 'Normal', 'R', 'n').send).toBe(true); // a was forgotten: sent again
  });
});
