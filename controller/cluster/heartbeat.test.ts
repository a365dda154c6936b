import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Beat, Takeover } from '../../ledger/cluster-epoch.ts';
import { createLogger } from '../runtime/log.ts';
import { ClusterMember, clusterMetrics, leaseStale, type ClusterLedger, type LeaseView } from './heartbeat.ts';

/**
 * A member over a scripted ledger: `takeovers` and `beats` are answered in order (an Error is
 * thrown); once the beats run out, the next one waits until the member is stopped. Sleeps are
 * recorded and return at once.
 */
/** A Lease whose checks (ageMs, then failing) read the scripted entries in turn. */
function scriptedLease(entries: Array<[ageMs: number, failing: boolean]>): LeaseView {
  let current: [number, boolean] = [0, false];
  return {
    ageMs: () => (current = entries.shift() ?? [0, false])[0],
    failing: () => current[1],
    freshMs: 1_000,
    deadlineMs: 5_000,
  };
}

function member(script: { takeovers: (Takeover | Error)[]; beats: (Beat | Error)[]; lease?: Array<[ageMs: number, failing: boolean]> }) {
  const sleeps: number[] = [];
  const beatEpochs: number[] = [];
  const superseded: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let drained!: () => void;
  const beatsDone = new Promise<void>((resolve) => (drained = resolve));
  const registry = new Registry();
  const next = <T>(queue: (T | Error)[], what: string): T => {
    const answer = queue.shift();
    if (answer === undefined) throw new Error(`unscripted ${what}`);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const ledger: ClusterLedger = {
    acquire: () => Promise.resolve().then(() => next(script.takeovers, 'takeover')),
    beat: (epoch, signal) => {
      beatEpochs.push(epoch);
      if (script.beats.length === 0) {
        drained();
        return new Promise<Beat>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
      }
      return Promise.resolve().then(() => next(script.beats, 'beat'));
    },
  };
  const m = new ClusterMember({
    cluster: 'eu-1',
    ledger,
    log: createLogger({ level: 'debug', write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) }),
    metrics: clusterMetrics(registry),
    retryMs: 2_000,
    ...(script.lease ? { lease: scriptedLease(script.lease) } : {}),
    onSuperseded: (reason) => void superseded.push(reason),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  });
  const metric = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.cluster === 'eu-1')?.value ?? 0;
  return { m, sleeps, beatEpochs, superseded, lines, beatsDone, metric };
}

const taken = (epoch: number, leaseMs = 15_000): Takeover => ({ kind: 'taken', epoch, state: 'ready', leaseMs, joined: epoch === 1 });

describe('ClusterMember', () => {
  it('retries a refused or failed takeover every retryMs, then sends a heartbeat every third of the lease at its epoch', async () => {
    const t = member({ takeovers: [{ kind: 'refused', reason: 'no cluster named eu-1' }, new Error('database unavailable'), taken(4, 9_000)], beats: [{ kind: 'renewed' }, { kind: 'renewed' }] });
    t.m.start(new AbortController().signal);
    await t.beatsDone;
    expect(t.sleeps).toEqual([2_000, 2_000, 3_000, 3_000, 3_000]);
    expect(t.beatEpochs).toEqual([4, 4, 4]);
    expect(await t.metric('modeldock_cluster_epoch')).toBe(4);
    expect(t.lines.filter((l) => l.level !== 'debug').map((l) => [l.level, l.msg])).toEqual([
      ['error', 'cluster takeover refused'],
      ['warn', 'cluster takeover failed'],
      ['info', 'cluster taken over'],
    ]);
    expect(t.lines[0]).toMatchObject({ cluster: 'eu-1', reason: 'no cluster named eu-1' });
    await t.m.stop();
    expect(t.superseded).toEqual([]);
    expect(t.m.started).toBe(false);
  });

  it('a failed heartbeat is counted and retried after retryMs, not a whole interval later; a superseded one stops the member and says why, once', async () => {
    const t = member({ takeovers: [taken(2)], beats: [new Error('deadline exceeded'), { kind: 'renewed' }, { kind: 'superseded', epoch: 3, state: 'lost' }] });
    t.m.start(new AbortController().signal);
    await expect.poll(() => t.superseded.length).toBe(1);
    expect(t.sleeps).toEqual([5_000, 2_000, 5_000]);
    expect(t.superseded[0]).toBe('cluster eu-1 epoch 2 superseded (now 3, lost)');
    expect(t.beatEpochs).toEqual([2, 2, 2]);
    expect(await t.metric('modeldock_cluster_heartbeat_failures_total')).toBe(1);
    expect(await t.metric('modeldock_cluster_epoch_superseded_total')).toBe(1);
  });

  it('a lease shorter than three retry periods retries a failed heartbeat at the heartbeat interval', async () => {
    const t = member({ takeovers: [taken(1, 3_000)], beats: [new Error('deadline exceeded'), { kind: 'superseded', epoch: 2, state: 'lost' }] });
    t.m.start(new AbortController().signal);
    await expect.poll(() => t.superseded.length).toBe(1);
    expect(t.sleeps).toEqual([1_000, 1_000]);
  });

  it('no heartbeat while the leader Lease is stale (the API server out of reach): withheld and counted, not a failure; sent again once renewed', async () => {
    const t = member({
      takeovers: [taken(1, 15_000)],
      beats: [{ kind: 'renewed' }, { kind: 'superseded', epoch: 2, state: 'lost' }],
      lease: [
        [200, false],
        [1_500, true],
        [4_000, true],
        [300, false],
      ],
    });
    t.m.start(new AbortController().signal);
    await expect.poll(() => t.superseded.length).toBe(1);
    // Fresh: sent; stale twice: withheld, looked at again after retryMs; fresh again: sent.
    expect(t.beatEpochs).toEqual([1, 1]);
    expect(t.sleeps).toEqual([5_000, 5_000, 2_000, 2_000]);
    expect(await t.metric('modeldock_cluster_heartbeats_withheld_total')).toBe(2);
    expect(await t.metric('modeldock_cluster_heartbeat_failures_total')).toBe(0);
  });

  it('renewals that succeed, however slowly (a busy API server), keep the heartbeat going up to the renew deadline', async () => {
    const t = member({
      takeovers: [taken(1, 15_000)],
      beats: [{ kind: 'renewed' }, { kind: 'renewed' }, { kind: 'superseded', epoch: 2, state: 'lost' }],
      lease: [
        [1_500, false],
        [4_900, false],
        [5_100, false],
        [300, false],
      ],
    });
    t.m.start(new AbortController().signal);
    await expect.poll(() => t.superseded.length).toBe(1);
    expect(t.beatEpochs).toEqual([1, 1, 1]);
    expect(await t.metric('modeldock_cluster_heartbeats_withheld_total')).toBe(1);
  });

  it('leaseStale: failing renewals past two retry periods, or none at all past the renew deadline', () => {
    const lease = { freshMs: 1_000, deadlineMs: 3_000 };
    expect([900, 1_100, 3_100].map((age) => leaseStale(age, true, lease))).toEqual([false, true, true]);
    expect([900, 1_100, 3_000, 3_100].map((age) => leaseStale(age, false, lease))).toEqual([false, false, false, true]);
  });

  it('a cluster row that is gone supersedes it too', async () => {
    const t = member({ takeovers: [taken(1)], beats: [{ kind: 'superseded', epoch: null, state: null }] });
    t.m.start(new AbortController().signal);
    await expect.poll(() => t.superseded).toEqual(['cluster eu-1 epoch 1 superseded (now no row, not registered)']);
  });

  it('the Manager stopping aborts a heartbeat in flight: no superseded, no failure counted', async () => {
    const t = member({ takeovers: [taken(1)], beats: [] });
    const manager = new AbortController();
    t.m.start(manager.signal);
    await t.beatsDone;
    manager.abort(new Error('manager stopping'));
    await t.m.stop();
    expect(t.superseded).toEqual([]);
    expect(await t.metric('modeldock_cluster_heartbeat_failures_total')).toBe(0);
    expect(t.lines.filter((l) => l.level !== 'info')).toEqual([]);
  });
});
