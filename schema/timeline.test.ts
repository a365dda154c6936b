import { describe, expect, it } from 'vitest';
import { timelineOf, timelineSchema } from './timeline.ts';

describe('timelineOf', () => {
  it('each moment with the milliseconds since admission; moments not reached are null', () => {
    const t = timelineOf('2026-01-01T00:00:00.250Z', { deliveredAt: '2026-01-01T00:00:00.400Z', scheduledAt: '2026-01-01T00:00:02Z', startedAt: null, readyAt: null });
    expect(t).toEqual({
      admittedAt: '2026-01-01T00:00:00.250Z',
      deliveredAt: '2026-01-01T00:00:00.400Z',
      scheduledAt: '2026-01-01T00:00:02Z',
      startedAt: null,
      readyAt: null,
      sinceAdmissionMs: { delivered: 150, scheduled: 1750, started: null, ready: null },
    });
    expect(timelineSchema.parse(t)).toEqual(t);
  });
  it('a second-precision time never reads before the moment before it (nor before admission)', () => {
    const t = timelineOf('2026-01-01T00:00:00.700Z', { deliveredAt: null, scheduledAt: '2026-01-01T00:00:00Z', startedAt: '2026-01-01T00:00:01Z', readyAt: null });
    expect(t.sinceAdmissionMs).toEqual({ delivered: null, scheduled: 0, started: 300, ready: null });
    const real = timelineOf('2026-12-02T01:05:44.976Z', {
      deliveredAt: '2026-12-02T01:05:45.403Z',
      scheduledAt: '2026-12-02T01:05:45.000Z',
      startedAt: '2026-12-02T01:05:45.000Z',
      readyAt: '2026-12-02T01:05:46.337Z',
    });
    expect(real.sinceAdmissionMs).toEqual({ delivered: 427, scheduled: 427, started: 427, ready: 1361 });
  });
});
