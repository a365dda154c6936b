import { describe, expect, it } from 'vitest';
import { ChangeNotice } from './change-notice.ts';
import { waitForEndpoint } from './endpoint-wait.ts';
import type { Resolution, Route } from './routes.ts';

const ROUTE: Route = { tenant: 'acme', namespace: 'md-acme', endpoints: [{ address: '10.0.0.1', port: 8000, pod: 'p1' }] };
const READY: Resolution = { kind: 'route', route: ROUTE };
const UNKNOWN: Resolution = { kind: 'unknown' };

/** A table the test changes: `resolve` reads it, `changed` hears the next change. */
function table(initial: Resolution) {
  let now = initial;
  let reads = 0;
  const change = new ChangeNotice();
  return {
    resolve: () => {
      reads += 1;
      return now;
    },
    changed: (signal: AbortSignal) => change.next(signal),
    set(r: Resolution) {
      now = r;
      change.notify();
    },
    reads: () => reads,
    waiting: () => change.waiting,
  };
}

const never = new AbortController().signal;

describe('waitForEndpoint', () => {
  it('answers at once what waiting cannot change, and everything when the wait is 0', async () => {
    for (const r of [READY, { kind: 'not_found' } as const]) {
      const t = table(r);
      expect(await waitForEndpoint({ ...t, waitMs: 5000, signal: never })).toBe(r);
      expect(t.reads()).toBe(1);
    }
    const t = table(UNKNOWN);
    expect(await waitForEndpoint({ ...t, waitMs: 0, signal: never })).toBe(UNKNOWN);
    expect(t.waiting()).toBe(0);
  });

  it('re-reads the table at each change until a route is ready (no reading in between)', async () => {
    const t = table(UNKNOWN);
    const waiting = waitForEndpoint({ ...t, waitMs: 5000, signal: never });
    await expect.poll(() => t.waiting()).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    const readsBefore = t.reads();
    t.set({ kind: 'no_ready_endpoint', route: { ...ROUTE, endpoints: [] } });
    await expect.poll(() => t.reads()).toBe(readsBefore + 1);
    t.set(READY);
    expect(await waiting).toBe(READY);
    expect(t.reads()).toBe(readsBefore + 2);
    expect(t.waiting()).toBe(0);
  });

  it('a change right after a read is not missed (it listens before it reads)', async () => {
    const t = table(UNKNOWN);
    let reads = 0;
    const started = Date.now();
    const r = await waitForEndpoint({
      resolve: () => {
        const r = t.resolve();
        if (++reads === 2) t.set(READY); // the event lands between this read and the next wait
        return r;
      },
      changed: t.changed,
      waitMs: 5000,
      signal: never,
    });
    expect(r).toBe(READY);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('when the wait is over, the table as it is then', async () => {
    const t = table({ kind: 'no_ready_endpoint', route: { ...ROUTE, endpoints: [] } });
    const started = Date.now();
    expect(await waitForEndpoint({ ...t, waitMs: 100, signal: never })).toEqual({ kind: 'no_ready_endpoint', route: { ...ROUTE, endpoints: [] } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(t.waiting()).toBe(0);
  });

  it('ends at once when the request ends', async () => {
    const t = table(UNKNOWN);
    const request = new AbortController();
    const waiting = waitForEndpoint({ ...t, waitMs: 60_000, signal: request.signal });
    await expect.poll(() => t.waiting()).toBe(1);
    const started = Date.now();
    request.abort();
    expect(await waiting).toBe(UNKNOWN);
    expect(Date.now() - started).toBeLessThan(100);
    expect(t.waiting()).toBe(0);
  });

  it('without change notices, re-reads every pollMs', async () => {
    const t = table(UNKNOWN);
    const waiting = waitForEndpoint({ resolve: t.resolve, waitMs: 5000, signal: never, pollMs: 10 });
    await expect.poll(() => t.reads()).toBeGreaterThan(3);
    t.set(READY);
    expect(await waiting).toBe(READY);
  });
});
