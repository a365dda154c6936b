import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LeaderElector, microTime } from './leader.ts';
import { silentLogger } from './log.ts';
import { fakeLeaseApi } from '../../test/support/fake-lease.ts';

const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
const elector = (api: ReturnType<typeof fakeLeaseApi>, identity: string, t: Partial<typeof timing> = {}) =>
  new LeaderElector({ client: api.as(identity), namespace: 'ns', name: 'l', identity, log: silentLogger, ...timing, ...t });

describe('LeaderElector', () => {
  it('formats MicroTime with 6 fractional digits', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
  });

  it('rejects inconsistent timings', () => {
    const api = fakeLeaseApi();
    expect(() => new LeaderElector({ client: api.client, namespace: 'n', name: 'l', identity: 'a', log: silentLogger, leaseDurationMs: 1000, renewDeadlineMs: 1000, retryPeriodMs: 100 })).toThrow();
  });

  it('one leader at a time; a released lease is taken over at once, with leaseTransitions + 1', async () => {
    const api = fakeLeaseApi();
    const long = { leaseDurationMs: 5000 }; // expiry would take 5 s; release must be much faster
    const a = elector(api, 'a', long);
    const b = elector(api, 'b', long);
    let aLeading = false;
    let bLeading = false;
    const runA = a.run({ onStartedLeading: () => (aLeading = true), onStoppedLeading: () => (aLeading = false) });
    await waitUntil(() => aLeading);
    const runB = b.run({ onStartedLeading: () => (bLeading = true), onStoppedLeading: () => (bLeading = false) });
    // b read the lease held by a three times (its retries, counted) and stayed out.
    await waitUntil(() => api.reads('b') >= 3);
    expect([aLeading, bLeading]).toEqual([true, false]);
    expect(api.lease()?.spec.holderIdentity).toBe('a');
    const t0 = performance.now();
    await a.stop(); // graceful: releases (empty holder)
    await runA;
    await waitUntil(() => bLeading);
    expect(performance.now() - t0).toBeLessThan(long.leaseDurationMs); // no need to wait for expiry
    expect(api.lease()?.spec.holderIdentity).toBe('b');
    expect(api.lease()?.spec.leaseTransitions).toBe(1);
    await b.stop();
    await runB;
  });

  it('stop() during a renew in flight waits for it, then releases over the lease it left (no 409)', async () => {
    const api = fakeLeaseApi();
    const a = elector(api, 'a');
    let leading = false;
    const run = a.run({ onStartedLeading: () => (leading = true), onStoppedLeading: () => undefined });
    await waitUntil(() => leading);
    // The next renew's PUT lands on the server, but its answer is still on the way when stop() is called.
    const c = api.client as unknown as { replace: (p: string, b: unknown) => Promise<unknown> };
    const replace = c.replace.bind(c);
    let held = false;
    c.replace = async (p, b) => {
      const written = await replace(p, b);
      if (!held && (b as { spec: { holderIdentity: unknown } }).spec.holderIdentity === 'a') {
        held = true;
        await sleep(150); // the answer of this PUT is on the way while stop() is called
      }
      return written;
    };
    await waitUntil(() => held);
    await a.stop();
    await run;
    expect(api.lease()?.spec.holderIdentity).toBeNull();
    expect(api.writes.at(-1)).toEqual({ holder: null, transitions: 0 });
  });

  it('a crashed leader (no release) is replaced only after the lease duration, judged on the local clock', async () => {
    const api = fakeLeaseApi();
    // A lease written by a leader whose clock is far in the future: renewTime must not matter.
    await api.client.create('/x', { metadata: { name: 'l' }, spec: { holderIdentity: 'ghost', leaseDurationSeconds: 1, renewTime: microTime(new Date(Date.now() + 3_600_000)), leaseTransitions: 4 } });
    const b = elector(api, 'b');
    let leadingAt = 0;
    const t0 = performance.now();
    const run = b.run({ onStartedLeading: () => (leadingAt = performance.now()), onStoppedLeading: () => undefined });
    await waitUntil(() => leadingAt > 0, 5000);
    expect(leadingAt - t0).toBeGreaterThanOrEqual(1000);
    expect(api.lease()?.spec.leaseTransitions).toBe(5);
    await b.stop();
    await run;
  });

  it('steps down at once when it reads the lease held by someone else', async () => {
    const api = fakeLeaseApi();
    const a = elector(api, 'a');
    let lost = '';
    let leading = false;
    const run = a.run({ onStartedLeading: () => (leading = true), onStoppedLeading: (r) => (lost = r) });
    await waitUntil(() => leading);
    const l = api.lease()!;
    const t0 = performance.now();
    await api.client.replace('/x', { metadata: l.metadata, spec: { ...l.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 } });
    await run;
    expect(lost).toBe('lease held by intruder');
    expect(performance.now() - t0).toBeLessThan(timing.renewDeadlineMs); // no wait for the deadline
  });

  it('sinceRenewedMs and renewFailing: Infinity before the first acquire, small and not failing while renewing, growing and failing once renews fail', async () => {
    const api = fakeLeaseApi();
    const a = elector(api, 'a');
    expect(a.sinceRenewedMs()).toBe(Infinity);
    let leading = false;
    const run = a.run({ onStartedLeading: () => (leading = true), onStoppedLeading: () => undefined });
    await waitUntil(() => leading);
    await waitUntil(() => api.reads('a') >= 3); // renewing every retry period
    await waitUntil(() => a.sinceRenewedMs() < timing.retryPeriodMs); // a renew began within the last period
    expect(a.renewFailing()).toBe(false);
    (api.client as unknown as { get: () => Promise<never> }).get = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    await waitUntil(() => a.renewFailing());
    await waitUntil(() => a.sinceRenewedMs() > 3 * timing.retryPeriodMs);
    await run;
    expect(a.sinceRenewedMs()).toBeGreaterThanOrEqual(timing.renewDeadlineMs);
  });

  it('loses leadership when it cannot renew within the renew deadline', async () => {
    const api = fakeLeaseApi();
    const a = elector(api, 'a');
    let lost = '';
    let leading = false;
    const run = a.run({ onStartedLeading: () => (leading = true), onStoppedLeading: (r) => (lost = r) });
    await waitUntil(() => leading);
    // The API server becomes unreachable: every renew fails.
    const c = api.client as unknown as { get: () => Promise<never> };
    const t0 = performance.now();
    c.get = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    await run;
    expect(lost).toBe('renew deadline exceeded');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(timing.renewDeadlineMs);
    expect(a.isLeader).toBe(false);
  });
});

async function waitUntil(cond: () => boolean, ms = 3000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}
