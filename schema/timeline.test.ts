import { describe, expect, it } from 'vitest';
import { timelineSchema } from './timeline-schema.ts';
import { describeFailure, elapsedMs, formatDuration, nextStage, startupStages, timelineOf } from './timeline.ts';

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

const base = { state: 'admitted', createdAt: '2026-12-01T10:00:00.000Z', binding: null };
const statuses = (a: Parameters<typeof startupStages>[0]) => startupStages(a).map((s) => `${s.stage}:${s.status}:${s.at ?? '-'}`);

describe('startupStages without a timeline (an API that does not report one)', () => {
  it('admitted only: admitted at createdAt, scheduled/started not reported, the rest pending', () => {
    expect(statuses(base)).toEqual([
      'admitted:done:2026-12-01T10:00:00.000Z',
      'delivered:pending:-',
      'scheduled:unreported:-',
      'started:unreported:-',
      'ready:pending:-',
    ]);
    expect(nextStage(startupStages(base))).toBe('delivered');
  });
  it('delivered by state or binding, without a made-up time', () => {
    expect(statuses({ ...base, state: 'delivered' })[1]).toBe('delivered:done:-');
    expect(statuses({ ...base, binding: { firstReadyAt: null } })[1]).toBe('delivered:done:-');
    expect(nextStage(startupStages({ ...base, state: 'delivered' }))).toBe('ready');
  });
  it('ready at binding.firstReadyAt; scheduled/started stay unreported', () => {
    const a = { ...base, state: 'ready', binding: { firstReadyAt: '2026-12-01T10:00:02.500Z', everReady: true } };
    expect(statuses(a)).toEqual([
      'admitted:done:2026-12-01T10:00:00.000Z',
      'delivered:done:-',
      'scheduled:unreported:-',
      'started:unreported:-',
      'ready:done:2026-12-01T10:00:02.500Z',
    ]);
    expect(nextStage(startupStages(a))).toBeNull();
  });
  it('a deleted admission that was ready keeps its ready stage', () => {
    expect(statuses({ ...base, state: 'releasing', binding: { firstReadyAt: '2026-12-01T10:00:03.000Z' } })[4]).toBe('ready:done:2026-12-01T10:00:03.000Z');
  });
});

describe('startupStages with a timeline', () => {
  const timeline = { admittedAt: '2026-12-01T10:00:00.000Z', deliveredAt: '2026-12-01T10:00:00.400Z', scheduledAt: null, startedAt: null, readyAt: null };
  it('reads each stage from the timeline; nulls are pending', () => {
    expect(statuses({ ...base, timeline })).toEqual([
      'admitted:done:2026-12-01T10:00:00.000Z',
      'delivered:done:2026-12-01T10:00:00.400Z',
      'scheduled:pending:-',
      'started:pending:-',
      'ready:pending:-',
    ]);
  });
  it('a stage without a time before a reached one was passed: done, time not reported', () => {
    const t = { ...timeline, startedAt: '2026-12-01T10:00:01.000Z' };
    expect(statuses({ ...base, timeline: t }).slice(2, 4)).toEqual(['scheduled:done:-', 'started:done:2026-12-01T10:00:01.000Z']);
  });
  it('the timeline wins over the fallback fields', () => {
    expect(statuses({ ...base, state: 'ready', binding: { firstReadyAt: '2026-12-01T10:00:09.000Z' }, timeline })[4]).toBe('ready:pending:-');
  });
});

describe('formatting', () => {
  it.each([
    [0, '0ms'],
    [850, '850ms'],
    [4_240, '4.2s'],
    [187_000, '3m07s'],
    [7_500_000, '2h05m'],
    [-5, '0ms'],
  ])('formatDuration(%i) = %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
  it('elapsedMs is null when a side is missing or unparsable', () => {
    expect(elapsedMs('2026-12-01T10:00:00.000Z', '2026-12-01T10:00:01.500Z')).toBe(1500);
    expect(elapsedMs(null, '2026-12-01T10:00:01.500Z')).toBeNull();
    expect(elapsedMs('x', '2026-12-01T10:00:01.500Z')).toBeNull();
  });
  it('describeFailure: one line with pod, reason, exit code and message', () => {
    expect(describeFailure({ pod: 'md-x-1', reason: 'CrashLoopBackOff', exitCode: 1, message: 'back-off\n restarting' })).toBe('pod md-x-1: CrashLoopBackOff, exit code 1 — back-off restarting');
    expect(describeFailure({ reason: 'ImagePullBackOff' })).toBe('ImagePullBackOff');
  });
});
