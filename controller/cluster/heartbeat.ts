// A controller started with CLUSTER=<name> is that cluster's controller (docs/multi-cluster.md):
// once it leads (its Lease), it takes the cluster over in the ledger (a new cluster epoch; a joining
// cluster becomes ready, so placements start) and then sends a heartbeat every third of the
// cluster's lease, judged by the database's clock. A heartbeat that finds the epoch moved on (a
// newer takeover, the operator, the supervisor's `lost`) means this process is superseded: it stops,
// as on losing its Lease, and its restart takes the cluster over again in the state it is in.
// A takeover the ledger refuses (no such cluster, or a forgotten one) or cannot make (the database
// is down) is retried every `retryMs`. No heartbeat is sent while the leader Lease is stale (its
// renewals failing, or none for the renew deadline: leaseStale): the cluster is not vouched for by
// a controller that cannot act on it.
// A failed heartbeat is retried after `retryMs` (at most the
// heartbeat interval), not a whole interval later: a beat whose deadline ran out while the process
// was paused (or the database slow) must not leave the lease two intervals without a heartbeat.
import { setTimeout as sleepFor } from 'node:timers/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import { acquireClusterEpoch, heartbeat, type Beat, type Takeover } from '../../ledger/cluster-epoch.ts';
import type { Db } from '../../ledger/db.ts';
import { childAbort } from '../runtime/abort.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/log.ts';

/** The ledger as the cluster's controller uses it: its takeover and its heartbeat at an epoch. */
export interface ClusterLedger {
  acquire(signal: AbortSignal): Promise<Takeover>;
  beat(epoch: number, signal: AbortSignal): Promise<Beat>;
}

export function clusterLedger(db: Db, o: { cluster: string; holder: string; now: () => Date }): ClusterLedger {
  return {
    acquire: (signal) => acquireClusterEpoch(db.withSignal(signal), { cluster: o.cluster, holder: o.holder, now: o.now() }),
    beat: (epoch, signal) => heartbeat(db.withSignal(signal), { cluster: o.cluster, epoch, holder: o.holder }),
  };
}

export interface ClusterMetrics {
  epoch: Gauge<'cluster'>;
  heartbeatFailures: Counter<'cluster'>;
  heartbeatsWithheld: Counter<'cluster'>;
  superseded: Counter<'cluster'>;
}

export function clusterMetrics(registry: Registry): ClusterMetrics {
  const registers = [registry];
  return {
    epoch: new Gauge({ name: 'modeldock_cluster_epoch', help: 'The cluster epoch this controller took its cluster over at (0 until it has).', labelNames: ['cluster'], registers }),
    heartbeatFailures: new Counter({ name: 'modeldock_cluster_heartbeat_failures_total', help: 'Cluster heartbeats that could not be written (retried after the retry period).', labelNames: ['cluster'], registers }),
    heartbeatsWithheld: new Counter({
      name: 'modeldock_cluster_heartbeats_withheld_total',
      help: 'Cluster heartbeats not sent because the leader Lease was not renewed recently (the API server out of reach).',
      labelNames: ['cluster'],
      registers,
    }),
    superseded: new Counter({ name: 'modeldock_cluster_epoch_superseded_total', help: "Heartbeats that found the cluster's epoch moved on: the controller stops.", labelNames: ['cluster'], registers }),
  };
}

export interface ClusterMemberOptions {
  cluster: string;
  ledger: ClusterLedger;
  log: Logger;
  metrics: ClusterMetrics;
  /** Delay before retrying a takeover that failed or was refused, or a heartbeat that failed. */
  retryMs: number;
  /** The leader Lease, which a heartbeat needs fresh (leaseStale). Omitted: every heartbeat is sent. */
  lease?: LeaseView;
  /** Called once when a heartbeat finds this controller superseded (the process exits). */
  onSuperseded: (reason: string) => void;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** What the heartbeat knows of the controller's leader Lease. */
export interface LeaseView {
  /** Since the last acquire or renew that succeeded began. */
  ageMs: () => number;
  /** The last acquire or renew that completed failed. */
  failing: () => boolean;
  /** The age past which a failing Lease withholds the heartbeat (two retry periods). */
  freshMs: number;
  /** The age past which any Lease does (the renew deadline: the elector gives up there). */
  deadlineMs: number;
}

/**
 * PURE (docs/multi-cluster.md T5): whether the Lease is too stale for a heartbeat. A controller whose
 * renewals fail (its API server out of reach) stops vouching for its cluster within two retry
 * periods, not at its renew deadline, so the cluster is judged lost a lease after the API server went
 * away. Renewals that succeed but slowly (a busy API server) keep it vouching up to the renew deadline:
 * a loaded cluster is not a lost one.
 */
export function leaseStale(ageMs: number, failing: boolean, lease: Pick<LeaseView, 'freshMs' | 'deadlineMs'>): boolean {
  return ageMs > lease.deadlineMs || (failing && ageMs > lease.freshMs);
}

export class ClusterMember {
  readonly #o: ClusterMemberOptions;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  #abort = new AbortController();
  #running: Promise<void> | undefined;
  #started = false;

  constructor(o: ClusterMemberOptions) {
    this.#o = o;
    this.#sleep = o.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal, ref: false }));
  }

  get started(): boolean {
    return this.#started;
  }

  start(signal?: AbortSignal): void {
    this.#started = true;
    this.#abort = childAbort(signal);
    this.#running = this.#run(this.#abort.signal).catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.#o.log.error('cluster membership stopped', { cluster: this.#o.cluster, err: errorMessage(err) });
    });
  }

  async stop(): Promise<void> {
    this.#started = false;
    this.#abort.abort(new Error('cluster membership stopping'));
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const { cluster, log } = this.#o;
    const taken = await this.#takeOver(signal);
    log.info('cluster taken over', { cluster, epoch: taken.epoch, state: taken.state, joined: taken.joined });
    this.#o.metrics.epoch.set({ cluster }, taken.epoch);
    const every = Math.max(100, Math.floor(taken.leaseMs / 3));
    const retry = Math.min(this.#o.retryMs, every);
    let wait = every;
    for (;;) {
      await this.#sleep(wait, signal);
      wait = every;
      const lease = this.#o.lease;
      const leaseAgeMs = lease?.ageMs() ?? 0;
      const renewFailing = lease?.failing() ?? false;
      if (lease && leaseStale(leaseAgeMs, renewFailing, lease)) {
        this.#o.metrics.heartbeatsWithheld.inc({ cluster });
        log.debug('cluster heartbeat withheld: the leader Lease is stale', { cluster, leaseAgeMs, renewFailing });
        wait = retry;
        continue;
      }
      let beat: Beat;
      const sentAt = performance.now();
      try {
        beat = await this.#o.ledger.beat(taken.epoch, signal);
        log.debug('cluster heartbeat', { cluster, epoch: taken.epoch, kind: beat.kind, ms: Math.round(performance.now() - sentAt) });
      } catch (err) {
        signal.throwIfAborted();
        this.#o.metrics.heartbeatFailures.inc({ cluster });
        log.warn('cluster heartbeat failed', { cluster, epoch: taken.epoch, err: errorMessage(err) });
        wait = retry;
        continue;
      }
      if (beat.kind === 'superseded') {
        this.#o.metrics.superseded.inc({ cluster });
        const reason = `cluster ${cluster} epoch ${taken.epoch} superseded (now ${beat.epoch ?? 'no row'}, ${beat.state ?? 'not registered'})`;
        log.error('cluster epoch superseded', { cluster, epoch: taken.epoch, now: beat.epoch, state: beat.state });
        this.#o.onSuperseded(reason);
        return;
      }
    }
  }

  async #takeOver(signal: AbortSignal): Promise<Extract<Takeover, { kind: 'taken' }>> {
    for (;;) {
      try {
        const t = await this.#o.ledger.acquire(signal);
        if (t.kind === 'taken') return t;
        this.#o.log.error('cluster takeover refused', { cluster: this.#o.cluster, reason: t.reason });
      } catch (err) {
        signal.throwIfAborted();
        this.#o.log.warn('cluster takeover failed', { cluster: this.#o.cluster, err: errorMessage(err) });
      }
      await this.#sleep(this.#o.retryMs, signal);
    }
  }
}
