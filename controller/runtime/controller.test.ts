import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../test/support/wait.ts';
import { Controller, splitKey } from './controller.ts';
import { KubeApiError, TerminalError } from './errors.ts';
import { silentLogger } from './log.ts';
import { Metrics } from './metrics.ts';

describe('Controller', () => {
  it('stop() aborts the signal of an in-flight reconcile and resolves only after it returned', async () => {
    let seen: AbortSignal | undefined;
    let returned = false;
    const c = new Controller({
      name: 't',
      workers: 1,
      log: silentLogger,
      reconcile: async (_req, ctx) => {
        seen = ctx.signal;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        await sleep(20); // work: a cleanup after the abort that still finishes before stop() resolves
        returned = true;
        throw ctx.signal.reason;
      },
    });
    c.start();
    c.enqueue('ns/a');
    await waitFor('the reconcile to start', async () => seen, { intervalMs: 1 });
    if (!seen) throw new Error('unreachable');
    expect(seen.aborted).toBe(false);
    await c.stop();
    expect(seen.aborted).toBe(true);
    expect(returned).toBe(true);
  });

  it("a parent signal (the Manager's shutdown) aborts in-flight reconciles", async () => {
    const parent = new AbortController();
    let seen: AbortSignal | undefined;
    const c = new Controller({ name: 't', workers: 1, log: silentLogger, reconcile: async (_r, ctx) => void (seen = ctx.signal) });
    c.start(parent.signal);
    c.enqueue('ns/a');
    await waitFor('the reconcile to start', async () => seen, { intervalMs: 1 });
    if (!seen) throw new Error('unreachable');
    parent.abort();
    expect(seen.aborted).toBe(true);
    await c.stop();
  });

  it('splits keys', () => {
    expect(splitKey('ns/a')).toEqual({ namespace: 'ns', name: 'a', key: 'ns/a' });
  });

  it('reconciles a burst of adds for one key far fewer times than adds; never concurrently per key; bounded workers', async () => {
    let running = 0;
    let maxRunning = 0;
    const perKey = new Map<string, number>();
    let concurrentSameKey = false;
    const active = new Set<string>();
    const c = new Controller({
      name: 't',
      workers: 3,
      log: silentLogger,
      reconcile: async ({ key }) => {
        if (active.has(key)) concurrentSameKey = true;
        active.add(key);
        running++;
        maxRunning = Math.max(maxRunning, running);
        perKey.set(key, (perKey.get(key) ?? 0) + 1);
        await sleep(20); // work, so adds arrive while a key is being reconciled
        running--;
        active.delete(key);
      },
    });
    c.start();
    for (let i = 0; i < 50; i++) {
      c.enqueue('ns/hot');
      c.enqueue(`ns/k${i % 5}`);
      if (i % 10 === 0) await sleep(5); // pacing: the burst spans several reconciles
    }
    // Drained: nothing queued and nothing running (a key added while running is queued again
    // by done(), in the same chain of microtasks, so a poll never sees that gap).
    await waitFor('the queue to drain', async () => c.queue.len() === 0 && running === 0 && perKey.size === 6, { intervalMs: 1 });
    await c.stop();
    expect(concurrentSameKey).toBe(false);
    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(perKey.get('ns/hot')).toBeGreaterThanOrEqual(1);
    expect(perKey.get('ns/hot')).toBeLessThan(10);
  });

  it("waits for the API server's Retry-After instead of its own (short) backoff", async () => {
    const at: number[] = [];
    const c = new Controller({
      name: 'ra',
      log: silentLogger,
      baseDelayMs: 1,
      reconcile: async () => {
        at.push(performance.now());
        if (at.length === 1) throw new KubeApiError('POST', '/x', 429, { reason: 'TooManyRequests' }, 1);
      },
    });
    c.start();
    c.enqueue('ns/a');
    await waitFor('the retry', async () => at.length >= 2, { timeoutMs: 5000, intervalMs: 5 });
    await c.stop();
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950); // 1 s Retry-After, not the 1 ms backoff
  });

  it('retries errors with backoff, marks a conflicted key fresh, does not retry terminal errors, honours requeueAfter', async () => {
    const metrics = new Metrics();
    const seen: Array<[string, boolean]> = [];
    let n = 0;
    const c = new Controller({
      name: 'r',
      workers: 1,
      log: silentLogger,
      metrics,
      baseDelayMs: 5,
      reconcile: async ({ key }, { fresh }) => {
        seen.push([key, fresh]);
        if (key === 'ns/conflict' && n++ === 0) throw new KubeApiError('PUT', '/x', 409, { reason: 'Conflict' });
        if (key === 'ns/terminal') throw new TerminalError('Bad', 'bad spec');
        if (key === 'ns/later' && seen.filter(([k]) => k === key).length === 1) return { requeueAfterMs: 30 };
        return {};
      },
    });
    c.start();
    c.enqueue('ns/conflict');
    c.enqueue('ns/terminal');
    c.enqueue('ns/later');
    // The events to wait for: the conflicted key read again, and 'later' run again after its 30 ms
    // — six 5 ms backoffs, in which a retried terminal key would have run again.
    const times = (key: string) => seen.filter(([k]) => k === key).length;
    await waitFor('the conflict retried and the requeue after 30 ms', async () => times('ns/conflict') === 2 && times('ns/later') === 2 && c.queue.len() === 0, { intervalMs: 1 });
    await c.stop();
    expect(seen.filter(([k]) => k === 'ns/conflict')).toEqual([
      ['ns/conflict', false],
      ['ns/conflict', true],
    ]);
    expect(seen.filter(([k]) => k === 'ns/terminal')).toHaveLength(1);
    expect(seen.filter(([k]) => k === 'ns/later')).toHaveLength(2);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/controller_runtime_reconcile_total\{controller="r",result="error"\} 2/);
    expect(text).toMatch(/controller_runtime_reconcile_total\{controller="r",result="requeue_after"\} 1/);
    expect(text).toMatch(/controller_runtime_reconcile_total\{controller="r",result="success"\} 2/);
    expect(text).toMatch(/controller_runtime_terminal_reconcile_errors_total\{controller="r"\} 1/);
    expect(text).toMatch(/workqueue_retries_total\{name="r"\} 1/);
  });

  it('with a batch delay, a burst of events arriving slower than a reconcile still collapses', async () => {
    let calls = 0;
    let sentinel = false;
    const make = (batchDelayMs: number) =>
      new Controller({
        name: `b${batchDelayMs}`,
        workers: 2,
        log: silentLogger,
        batchDelayMs,
        reconcile: async ({ key }) => {
          if (key === 'ns/sentinel') sentinel = true;
          else calls++;
        },
      });
    for (const delay of [0, 100]) {
      calls = 0;
      sentinel = false;
      const c = make(delay);
      c.start();
      const t0 = performance.now();
      for (let i = 0; i < 50; i++) {
        c.enqueue('ns/hot');
        await sleep(2); // pacing: events arrive slower than a reconcile takes
      }
      const burstMs = performance.now() - t0;
      // A sentinel event after the burst: its batch window closes after the hot key's last one
      // (timers fire in order, each reconcile here finishes in microtasks), so once it ran and
      // nothing is queued, every hot event has been reconciled.
      c.enqueue('ns/sentinel');
      await waitFor('the burst and the sentinel reconciled', async () => sentinel && c.queue.len() === 0, { intervalMs: 1 });
      await c.stop();
      if (delay === 0) expect(calls).toBeGreaterThan(25); // an idle worker takes every event
      else expect(calls).toBeLessThanOrEqual(Math.ceil(burstMs / delay) + 1); // one per window
    }
  });

  it('a periodic resync re-enqueues every key', async () => {
    const seen: string[] = [];
    const c = new Controller({ name: 's', log: silentLogger, resyncMs: 40, keys: () => ['ns/a', 'ns/b'], reconcile: async ({ key }) => void seen.push(key) });
    c.start(); // also enqueues every key once at start
    const times = (key: string) => seen.filter((k) => k === key).length;
    await waitFor('a resync after the start', async () => times('ns/a') >= 2 && times('ns/b') >= 2, { intervalMs: 5 });
    await c.stop();
    expect(seen.filter((k) => k === 'ns/a').length).toBeGreaterThanOrEqual(2);
    expect(seen.filter((k) => k === 'ns/b').length).toBeGreaterThanOrEqual(2);
  });

  it('stop() waits for the in-flight reconcile (graceful drain)', async () => {
    let started = false;
    let finished = false;
    const c = new Controller({
      name: 'd',
      log: silentLogger,
      reconcile: async () => {
        started = true;
        await sleep(50); // work in flight when stop() is called
        finished = true;
      },
    });
    c.start();
    c.enqueue('ns/a');
    await waitFor('the reconcile to start', async () => started, { intervalMs: 1 });
    expect(finished).toBe(false);
    await c.stop();
    expect(finished).toBe(true);
  });
});
