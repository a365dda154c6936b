import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Metrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';

describe('WorkQueue', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('collapses repeated adds of a waiting key into one', async () => {
    const q = new WorkQueue({ name: 't' });
    for (let i = 0; i < 50; i++) q.add('ns/a');
    q.add('ns/b');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.len()).toBe(0);
  });

  it('never hands a key being processed to a second worker; a change meanwhile re-queues it once, after done', async () => {
    const q = new WorkQueue({ name: 't' });
    q.add('k');
    const first = await q.get();
    expect(first).toBe('k');
    q.add('k');
    q.add('k');
    expect(q.len()).toBe(0); // not queued while processing
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done('k');
    await Promise.resolve();
    expect(second).toBe('k');
    q.done('k');
    expect(q.len()).toBe(0);
  });

  it('hands out high keys before normal ones, FIFO within each; a waiting key added as high moves up', async () => {
    const q = new WorkQueue({ name: 't' });
    q.add('n1');
    q.add('n2');
    q.add('h1', 'high');
    q.add('n3');
    q.add('n2', 'high'); // promoted: behind h1, ahead of n1 and n3
    q.add('h1'); // a normal add never demotes
    expect(q.len()).toBe(4);
    const order = [];
    for (let i = 0; i < 4; i++) order.push(await q.get());
    expect(order).toEqual(['h1', 'n2', 'n1', 'n3']);
  });

  it('a key added as high while it is processed is queued as high when done', async () => {
    const q = new WorkQueue({ name: 't' });
    q.add('k');
    expect(await q.get()).toBe('k');
    q.add('k'); // normal while processing
    q.add('other');
    q.add('k', 'high'); // promoted while processing
    q.done('k');
    expect(await q.get()).toBe('k');
    expect(await q.get()).toBe('other');
  });

  it('addRateLimited backs off exponentially per key with jitter, capped; forget resets', () => {
    const q = new WorkQueue({ name: 't', baseDelayMs: 10, maxDelayMs: 1000, random: () => 1 });
    const delays = Array.from({ length: 10 }, () => q.addRateLimited('k'));
    expect(delays.slice(0, 4)).toEqual([10, 20, 40, 80]);
    expect(Math.max(...delays)).toBe(1000);
    expect(q.numRequeues('k')).toBe(10);
    q.forget('k');
    expect(q.numRequeues('k')).toBe(0);
    const low = new WorkQueue({ name: 't', baseDelayMs: 10, random: () => 0 });
    expect(low.addRateLimited('k')).toBe(5); // equal jitter: at least half the step
  });

  it('addAfter delivers the key when due; the earliest pending time wins; duplicates collapse', async () => {
    const q = new WorkQueue({ name: 't' });
    q.addAfter('k', 1000);
    q.addAfter('k', 5000);
    q.addAfter('k', 200);
    vi.advanceTimersByTime(199);
    expect(q.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(q.len()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(q.len()).toBe(1);
  });

  it('shutDown releases waiting workers and drops delayed keys', async () => {
    const q = new WorkQueue({ name: 't' });
    const waiting = q.get();
    q.addAfter('k', 100);
    q.shutDown();
    expect(await waiting).toBeUndefined();
    vi.advanceTimersByTime(1000);
    q.add('x');
    expect(q.len()).toBe(0);
  });

  it('keeps workqueue_* metrics', async () => {
    const metrics = new Metrics();
    const q = new WorkQueue({ name: 'm', metrics });
    q.add('a');
    q.add('a');
    q.add('b');
    q.addRateLimited('c');
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/workqueue_adds_total\{name="m"\} 2/);
    expect(text).toMatch(/workqueue_depth\{name="m"\} 2/);
    expect(text).toMatch(/workqueue_retries_total\{name="m"\} 1/);
  });
});
