import { describe, expect, it } from 'vitest';
import { failureColumn, failureOrNull } from '../../ledger/columns.ts';
import { progressChange, progressOf, type Progress } from './progress.ts';

const none: Progress = { scheduledAt: null, startedAt: null, lastFailure: null };
const t = (s: string) => new Date(s);
const oom = { reason: 'OOMKilled', message: 'oom', pod: 'p', container: 'model', exitCode: 137, at: '2026-01-01T00:00:05Z' };

describe('progressOf', () => {
  it('reads the times and the last failure of a CR status; absent or unparseable is null', () => {
    expect(progressOf(undefined)).toEqual(none);
    expect(progressOf({ scheduledAt: '2026-01-01T00:00:01Z', startedAt: 'garbage', lastFailure: oom })).toEqual({ scheduledAt: t('2026-01-01T00:00:01Z'), startedAt: null, lastFailure: oom });
  });
});

describe('progressChange', () => {
  it('nothing observed, or nothing new: no write', () => {
    expect(progressChange(none, none)).toBeUndefined();
    const stored = { scheduledAt: t('2026-01-01T00:00:01Z'), startedAt: t('2026-01-01T00:00:02Z'), lastFailure: oom };
    expect(progressChange(stored, { ...stored, lastFailure: { ...oom } })).toBeUndefined();
  });
  it('a time is set once: written while the stored one is null, never moved', () => {
    expect(progressChange(none, { ...none, scheduledAt: t('2026-01-01T00:00:01Z') })).toEqual({ ...none, scheduledAt: t('2026-01-01T00:00:01Z') });
    expect(progressChange(none, { ...none, startedAt: t('2026-01-01T00:00:02Z') })).toEqual({ ...none, startedAt: t('2026-01-01T00:00:02Z') });
    const stored = { ...none, scheduledAt: t('2026-01-01T00:00:01Z') };
    expect(progressChange(stored, { ...none, scheduledAt: t('2026-01-01T00:00:09Z') })).toBeUndefined();
  });
  it('a failure replaces a different stored one; a cleared failure keeps the stored one', () => {
    expect(progressChange(none, { ...none, lastFailure: oom })).toEqual({ ...none, lastFailure: oom });
    const crash = { ...oom, reason: 'CrashLoopBackOff' };
    expect(progressChange({ ...none, lastFailure: oom }, { ...none, lastFailure: crash })).toEqual({ ...none, lastFailure: crash });
    expect(progressChange({ ...none, lastFailure: oom }, none)).toBeUndefined();
  });
});

describe('progressOf: a failure as its column holds it', () => {
  it('a message too long for binding.last_failure is cut, so the same failure seen again writes nothing', () => {
    const failure = { reason: 'CrashLoopBackOff', message: '"'.repeat(4096), pod: 'p', container: 'model', exitCode: 1 };
    const observed = progressOf({ lastFailure: failure });
    expect(JSON.stringify(observed.lastFailure).length).toBeLessThanOrEqual(4096);
    expect(progressChange(observed, progressOf({ lastFailure: failure }))).toBeUndefined();
  });
});

describe('progressOf: a failure the tenant controls compares as its column holds it', () => {
  it('control characters and characters outside the BMP: the stored failure read back equals the observed one, so nothing is written again', () => {
    const failure = { reason: 'CrashLoopBackOff', message: `\u001b[31m\u009b${'🙂'.repeat(3000)}\ud800`, pod: 'p', container: 'model', exitCode: 1 };
    const stored = failureOrNull(failureColumn(failure));
    expect(stored?.message).toMatch(/^\[31m(🙂)+\ufffd$/u);
    expect(progressChange({ ...none, lastFailure: stored }, progressOf({ lastFailure: failure }))).toBeUndefined();
  });
});
