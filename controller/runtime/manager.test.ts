import { describe, expect, it } from 'vitest';
import { fakeLeaseApi } from '../../test/support/fake-lease.ts';
import { waitFor } from '../../test/support/wait.ts';
import { silentLogger } from './log.ts';
import { Manager, type Runnable } from './manager.ts';
import { Metrics } from './metrics.ts';

const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

/** A runnable with one piece of work in flight, recording what happens to it. */
function worker(events: string[], o: { ignoresSignal?: boolean } = {}): Runnable {
  let started = false;
  let work: Promise<void> | undefined;
  return {
    get started() {
      return started;
    },
    start(signal) {
      started = true;
      work = new Promise<void>((resolve) => {
        if (o.ignoresSignal) return; // never returns: a call that ignores its signal
        signal.addEventListener('abort', () => {
          events.push('aborted');
          setTimeout(() => {
            events.push('work returned');
            resolve();
          }, 50);
        });
      });
    },
    async stop() {
      await work;
    },
  };
}

function manager(api: ReturnType<typeof fakeLeaseApi>, drainTimeoutMs = 5_000): Manager {
  return new Manager({
    client: api.client,
    log: silentLogger,
    metrics: new Metrics(),
    drainTimeoutMs,
    leaderElection: { client: api.client, namespace: 'ns', name: 'l', identity: 'a', ...timing },
  });
}

describe('Manager shutdown', () => {
  it('aborts in-flight work, waits for it, and only then releases the lease', async () => {
    const api = fakeLeaseApi();
    const events: string[] = [];
    const mgr = manager(api);
    mgr.addController(worker(events));
    await mgr.start();
    await mgr.waitForLeadership();
    const writesBefore = api.writes.length;
    const stopping = mgr.stop();
    await waitFor('the work to be aborted', async () => events.length > 0, { intervalMs: 1 });
    expect(events).toEqual(['aborted']); // its return is 50 ms away: the work is in flight
    expect(api.writes.length).toBe(writesBefore); // the lease is still ours while work is in flight
    await stopping;
    expect(events).toEqual(['aborted', 'work returned']);
    expect(api.writes.at(-1)?.holder).toBeNull(); // released after the work returned
  });

  it('keeps the lease when work ignores the signal past the drain timeout', async () => {
    const api = fakeLeaseApi();
    const mgr = manager(api, 100);
    mgr.addController(worker([], { ignoresSignal: true }));
    await mgr.start();
    await mgr.waitForLeadership();
    await mgr.stop();
    expect(api.writes.at(-1)?.holder).toBe('a'); // never handed back: a successor waits for expiry
  });
});
