import { describe, expect, test } from 'vitest';
import { QueueFullError, SlotScheduler, type Lease } from './slots.ts';

function fixture(slots = 2, queueLimit = 3) {
  let time = 1000;
  const scheduler = new SlotScheduler({ slots, queueLimit, now: () => time });
  return {
    scheduler,
    advance: (ms: number) => {
      time += ms;
    },
  };
}

/** Resolved leases in grant order, keyed by a label. */
function track(promise: Promise<Lease>, label: string, order: string[], leases: Map<string, Lease>) {
  return promise.then((lease) => {
    order.push(label);
    leases.set(label, lease);
    return lease;
  });
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SlotScheduler', () => {
  test('grants up to N slots at once, queues the rest', async () => {
    const { scheduler } = fixture(2, 3);
    await scheduler.acquire();
    await scheduler.acquire();
    void scheduler.acquire();
    expect({ busy: scheduler.busy, queued: scheduler.queued }).toEqual({ busy: 2, queued: 1 });
  });

  test('serves the queue in FIFO order as slots are released, and reports the wait', async () => {
    const { scheduler, advance } = fixture(2, 3);
    const order: string[] = [];
    const leases = new Map<string, Lease>();
    for (const label of ['a', 'b', 'c', 'd', 'e']) void track(scheduler.acquire(), label, order, leases);
    await flush();
    expect(order).toEqual(['a', 'b']);
    advance(250);
    leases.get('b')?.release();
    await flush();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(leases.get('c')?.waitedMs).toBe(250);
    leases.get('a')?.release();
    leases.get('c')?.release();
    await flush();
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect({ busy: scheduler.busy, queued: scheduler.queued }).toEqual({ busy: 2, queued: 0 });
  });

  test('rejects with QueueFullError when the queue is at its limit', async () => {
    const { scheduler } = fixture(1, 1);
    await scheduler.acquire();
    void scheduler.acquire();
    await expect(scheduler.acquire()).rejects.toBeInstanceOf(QueueFullError);
    expect(scheduler.queued).toBe(1);
  });

  test('queueLimit 0 means no waiting at all', async () => {
    const { scheduler } = fixture(1, 0);
    await scheduler.acquire();
    await expect(scheduler.acquire()).rejects.toBeInstanceOf(QueueFullError);
  });

  test('aborting while queued removes the waiter at once and rejects with the reason', async () => {
    const { scheduler } = fixture(1, 3);
    const first = await scheduler.acquire();
    const controller = new AbortController();
    const order: string[] = [];
    const leases = new Map<string, Lease>();
    const aborted = scheduler.acquire(controller.signal);
    void track(scheduler.acquire(), 'next', order, leases);
    expect(scheduler.queued).toBe(2);
    controller.abort(new Error('client left'));
    expect(scheduler.queued).toBe(1);
    await expect(aborted).rejects.toThrow('client left');
    first.release();
    await flush();
    expect(order).toEqual(['next']);
  });

  test('an already aborted signal never takes a slot', async () => {
    const { scheduler } = fixture(1, 1);
    await expect(scheduler.acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(scheduler.busy).toBe(0);
  });

  test('release is idempotent', async () => {
    const { scheduler } = fixture(2, 1);
    const lease = await scheduler.acquire();
    await scheduler.acquire();
    lease.release();
    lease.release();
    expect(scheduler.busy).toBe(1);
  });

  test('rejectQueued empties the queue but keeps running leases', async () => {
    const { scheduler } = fixture(1, 5);
    await scheduler.acquire();
    const waiting = [scheduler.acquire(), scheduler.acquire()];
    expect(scheduler.rejectQueued(new Error('shutdown'))).toBe(2);
    for (const p of waiting) await expect(p).rejects.toThrow('shutdown');
    expect({ busy: scheduler.busy, queued: scheduler.queued }).toEqual({ busy: 1, queued: 0 });
  });

  test.each([
    [{ slots: 0, queueLimit: 1 }],
    [{ slots: 1.5, queueLimit: 1 }],
    [{ slots: 1, queueLimit: -1 }],
  ])('rejects invalid configuration %o', (options) => {
    expect(() => new SlotScheduler(options)).toThrow(RangeError);
  });
});
