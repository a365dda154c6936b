import { describe, expect, it } from 'vitest';
import type { AdmissionView } from './model.ts';
import { ReleaseProgress, releaseVerdict, StartupProgress, startupVerdict } from './progress.ts';
import { plain, type Look } from './render.ts';
import { admission } from './test-fixtures.ts';

const flat: Look = { style: plain, fancy: false };
const t = (s: number) => new Date(Date.parse('2026-12-01T10:00:00.000Z') + s * 1000).toISOString();

describe('startupVerdict', () => {
  it.each([
    [{ state: 'admitted' }, 'waiting'],
    [{ state: 'delivered' }, 'waiting'],
    [{ state: 'ready' }, 'done'],
    [{ state: 'conflict' }, 'failed'],
    [{ state: 'deleting' }, 'failed'],
    [{ state: 'released' }, 'failed'],
    [{ state: 'delivered', deadOutboxRows: 1 }, 'failed'],
    [{ state: 'delivered', lastFailure: { reason: 'CrashLoopBackOff', exitCode: 1 } }, 'failed'],
    [{ state: 'delivered', lastFailure: { reason: 'ImagePullBackOff' } }, 'failed'],
    [{ state: 'delivered', lastFailure: { reason: 'OOMKilled', exitCode: 137 } }, 'waiting'],
  ] as const)('%j → %s', (over, kind) => expect(startupVerdict(admission(over)).kind).toBe(kind));
  it('a failure that may pass is a note on the wait', () => {
    expect(startupVerdict(admission({ state: 'delivered', lastFailure: { reason: 'OOMKilled' } }))).toEqual({ kind: 'waiting', note: 'last failure: OOMKilled' });
  });
});

describe('releaseVerdict', () => {
  it.each([
    [{ state: 'deleting' }, 'waiting'],
    [{ state: 'releasing', releaseBlockedSince: t(5), releaseBlockedPods: ['p-1'] }, 'waiting'],
    [{ state: 'released' }, 'done'],
    [{ state: 'conflict' }, 'failed'],
  ] as Array<[Partial<AdmissionView>, string]>)('%j → %s', (over, kind) => expect(releaseVerdict(admission(over)).kind).toBe(kind));
});

describe('StartupProgress', () => {
  it('prints each stage once, in order; unreported stages when a later one is reached', () => {
    const p = new StartupProgress(flat);
    expect(p.update(admission())).toEqual([`ok admitted   ${t(0)}`]);
    expect(p.waitingFor(admission())).toBe('delivered');
    expect(p.update(admission())).toEqual([]);
    expect(p.update(admission({ state: 'delivered' }))).toEqual(['ok delivered  reached (time not reported)']);
    expect(p.waitingFor(admission({ state: 'delivered' }))).toBe('ready');
    const ready = admission({ state: 'ready', binding: { namespace: 'ns', crName: 'c', everReady: true, firstReadyAt: t(2.5) } });
    expect(p.update(ready)).toEqual(['- scheduled  not reported by this API', '- started    not reported by this API', 'ok ready      +2.5s']);
    expect(p.finish(ready)).toEqual([]);
  });
  it('with a timeline, each stage has its time; finish() lists the stages never reached', () => {
    const p = new StartupProgress(flat);
    const timeline = { admittedAt: t(0), deliveredAt: t(0.4), scheduledAt: t(0.9), startedAt: null, readyAt: null };
    expect(p.update(admission({ state: 'delivered', timeline }))).toEqual([`ok admitted   ${t(0)}`, 'ok delivered  +400ms', 'ok scheduled  +900ms']);
    const failed = admission({ state: 'delivered', timeline, lastFailure: { reason: 'CrashLoopBackOff' } });
    expect(p.update(failed)).toEqual([]);
    expect(p.finish(failed)).toEqual(['- started    pending', '- ready      pending']);
  });
});

describe('ReleaseProgress', () => {
  it('prints state changes with server-side elapsed time, and ReleaseBlocked when its pods change', () => {
    const p = new ReleaseProgress(flat);
    expect(p.update(admission({ state: 'deleting', stateChangedAt: t(10) }))).toEqual([`deleting   ${t(10)}`]);
    expect(p.update(admission({ state: 'deleting', stateChangedAt: t(10) }))).toEqual([]);
    expect(p.update(admission({ state: 'releasing', stateChangedAt: t(11), releaseBlockedSince: t(12), releaseBlockedPods: ['p-1', 'p-2'] }))).toEqual([
      'releasing  +1.0s',
      `ReleaseBlocked since ${t(12)}: quota kept until these pods are gone: p-1, p-2`,
    ]);
    expect(p.update(admission({ state: 'releasing', stateChangedAt: t(11), releaseBlockedSince: t(12), releaseBlockedPods: ['p-2'] }))).toEqual([
      `ReleaseBlocked since ${t(12)}: quota kept until these pods are gone: p-2`,
    ]);
    expect(p.update(admission({ state: 'released', stateChangedAt: t(20) }))).toEqual(['released   +10.0s', 'ReleaseBlocked cleared']);
  });
  it('prints the finalizers when the ModelService stays in deletion with no pod left', () => {
    const p = new ReleaseProgress(flat);
    const stuck = { state: 'releasing', stateChangedAt: t(11), releaseBlockedSince: t(12), releaseBlockedReason: 'Finalizers', releaseBlockedPods: [], releaseBlockedFinalizers: ['example.com/hold'] };
    expect(p.update(admission(stuck))).toEqual([
      `releasing  ${t(11)}`,
      `ReleaseBlocked since ${t(12)}: quota kept until the ModelService leaves deletion; finalizers: example.com/hold`,
    ]);
    expect(releaseVerdict(admission(stuck))).toEqual({ kind: 'waiting', note: 'ReleaseBlocked: the ModelService stays in deletion (finalizers example.com/hold)' });
  });
});
