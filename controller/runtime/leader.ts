// Leader election with a coordination.k8s.io/v1 Lease, following client-go's
// tools/leaderelection (leaderelection.go):
// - tryAcquireOrRenew: GET the lease (404 → create it, 409 on create = lost); when the record
//   differs from the last one seen, remember it with the LOCAL observation time; a lease held by
//   someone else is valid until observedTime + leaseDurationSeconds on OUR monotonic clock
//   (renewTime is never compared across clocks); otherwise PUT the new record with the GET's
//   resourceVersion (409 = someone else won the race). Renewing keeps acquireTime and
//   leaseTransitions; taking over bumps leaseTransitions.
// - acquire: retry every retryPeriod (jittered ×[1, 2.2)). Renew: every retryPeriod; if no renew
//   succeeds within renewDeadline the leadership is lost → onStoppedLeading (main exits).
//   Stricter than client-go: a leader that READS the lease held by someone else (e.g. after a
//   long pause) steps down at once instead of retrying until its renew deadline.
// - release(): on graceful shutdown, write an empty holder (leaseDurationSeconds 1) so a
//   successor need not wait for expiry. As in client-go, where release runs after the renew loop
//   returned, it waits for a renew still in flight (its PUT would otherwise make the release's
//   resourceVersion stale: 409) and writes over the lease that renew left.
import { setTimeout as sleep } from 'node:timers/promises';
import { isConflict, isNotFound, errorMessage } from './errors.ts';
import { paths, type KubeClient } from './kube.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log: Logger;
  metrics?: Metrics;
  /** Monotonic clock (ms) for expiry judgement; wall clock for the times written into the lease. */
  now?: () => number;
  wallClock?: () => Date;
  random?: () => number;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}
interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

const JITTER = 1.2;
/** metav1.MicroTime: RFC 3339 with 6 fractional digits. */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectionOptions, 'metrics'>> & { metrics: Metrics | undefined };
  #observed: LeaseSpec | undefined;
  #observedRaw = '';
  #observedTime = 0;
  #lease: Lease | undefined;
  #leading = false;
  #stopped = false;
  /** The acquire/renew round trip in flight, if any: stop() waits for it before releasing. */
  #attempt: Promise<boolean> | undefined;
  #renewedAt: number | undefined;
  /** Whether the last acquire or renew that completed failed (refused, an error, a timeout). */
  #lastFailed = false;
  readonly #abort = new AbortController();

  constructor(o: LeaderElectionOptions) {
    this.#o = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      now: () => performance.now(),
      wallClock: () => new Date(),
      random: Math.random,
      metrics: undefined,
      ...o,
    };
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = this.#o;
    if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > JITTER * retryPeriodMs)) {
      throw new Error('leader election needs leaseDuration > renewDeadline > 1.2 × retryPeriod');
    }
    this.#o.metrics?.leaderStatus.set({ name: o.name }, 0);
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Blocks until this process is the leader, calls onStartedLeading, then renews until the
   * lease is lost (→ onStoppedLeading) or stop() is called. Resolves when leadership ends.
   */
  async run(cb: { onStartedLeading: () => void; onStoppedLeading: (reason: string) => void }): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs, log } = this.#o;
    while (!this.#stopped && !(await this.#tryOnce())) {
      await this.#sleep(retryPeriodMs * (1 + this.#o.random() * JITTER));
    }
    if (this.#stopped) return;
    this.#setLeading(true);
    log.info('became leader', { lease: this.#o.name, identity: this.#o.identity });
    cb.onStartedLeading();
    for (;;) {
      await this.#sleep(retryPeriodMs);
      if (this.#stopped) return;
      const deadline = this.#o.now() + renewDeadlineMs;
      let renewed = false;
      while (!this.#stopped && this.#o.now() < deadline) {
        if (await this.#tryOnce()) {
          renewed = true;
          break;
        }
        if (this.#observed?.holderIdentity && this.#observed.holderIdentity !== this.#o.identity) break; // someone else holds it
        await this.#sleep(Math.min(retryPeriodMs, Math.max(0, deadline - this.#o.now())));
      }
      if (this.#stopped) return;
      if (!renewed) {
        this.#setLeading(false);
        log.error('leader lease lost', { lease: this.#o.name, identity: this.#o.identity });
        const other = this.#observed?.holderIdentity && this.#observed.holderIdentity !== this.#o.identity;
        cb.onStoppedLeading(other ? `lease held by ${this.#observed?.holderIdentity}` : 'renew deadline exceeded');
        return;
      }
    }
  }

  /** Stops campaigning/renewing; if leading and `release` (default), hands the lease back (empty holder). */
  async stop({ release = true }: { release?: boolean } = {}): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#abort.abort();
    await this.#attempt;
    if (!release || !this.#leading || !this.#lease) return;
    this.#setLeading(false);
    const now = microTime(this.#o.wallClock());
    try {
      await this.#o.client.replace(paths.lease(this.#o.namespace, this.#o.name), {
        ...this.#lease,
        spec: { holderIdentity: null, leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: this.#observed?.leaseTransitions ?? 0 },
      });
      this.#o.log.info('leader lease released', { lease: this.#o.name });
    } catch (err) {
      this.#o.log.warn('could not release the leader lease', { err: errorMessage(err) });
    }
  }

  #tryOnce(): Promise<boolean> {
    const at = this.#o.now();
    this.#attempt = this.#tryAcquireOrRenew().then((ok) => {
      if (ok) this.#renewedAt = at;
      this.#lastFailed = !ok;
      return ok;
    });
    return this.#attempt;
  }

  /**
   * How long ago (this process's monotonic clock) the last acquire or renew that succeeded began:
   * the lease it wrote runs from then. Infinity before the first.
   */
  sinceRenewedMs(): number {
    return this.#renewedAt === undefined ? Infinity : this.#o.now() - this.#renewedAt;
  }

  /** True when the last acquire or renew that completed failed: the API server refused it, erred or did not answer in time. */
  renewFailing(): boolean {
    return this.#lastFailed;
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { client, namespace, name, identity, leaseDurationMs } = this.#o;
    const nowWall = microTime(this.#o.wallClock());
    const record: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.round(leaseDurationMs / 1000),
      acquireTime: nowWall,
      renewTime: nowWall,
      leaseTransitions: 0,
    };
    let lease: Lease;
    try {
      lease = await client.get<Lease>(paths.lease(namespace, name));
    } catch (err) {
      if (!isNotFound(err)) {
        this.#o.log.warn('leader election: cannot read lease', { err: errorMessage(err) });
        return false;
      }
      try {
        this.#lease = await client.create<Lease>(paths.leases(namespace), {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: record,
        });
      } catch (e) {
        if (!isConflict(e)) this.#o.log.warn('leader election: cannot create lease', { err: errorMessage(e) });
        return false;
      }
      this.#observe(record);
      return true;
    }
    const old = lease.spec ?? {};
    const raw = JSON.stringify(old);
    if (raw !== this.#observedRaw) this.#observe(old, raw);
    const heldByOther = !!old.holderIdentity && old.holderIdentity !== identity;
    if (heldByOther && this.#leaseValid()) return false;
    if (old.holderIdentity === identity) {
      record.acquireTime = old.acquireTime ?? nowWall;
      record.leaseTransitions = old.leaseTransitions ?? 0;
    } else {
      record.leaseTransitions = (old.leaseTransitions ?? 0) + 1;
    }
    try {
      this.#lease = await client.replace<Lease>(paths.lease(namespace, name), { ...lease, spec: record });
    } catch (err) {
      if (!isConflict(err)) this.#o.log.warn('leader election: cannot update lease', { err: errorMessage(err) });
      return false;
    }
    this.#observe(record);
    return true;
  }

  #observe(spec: LeaseSpec, raw = JSON.stringify(spec)): void {
    this.#observed = spec;
    this.#observedRaw = raw;
    this.#observedTime = this.#o.now();
  }

  #leaseValid(): boolean {
    const seconds = this.#observed?.leaseDurationSeconds ?? Math.round(this.#o.leaseDurationMs / 1000);
    return this.#observedTime + seconds * 1000 > this.#o.now();
  }

  #setLeading(v: boolean): void {
    this.#leading = v;
    this.#o.metrics?.leaderStatus.set({ name: this.#o.name }, v ? 1 : 0);
  }

  #sleep(ms: number): Promise<void> {
    return sleep(ms, undefined, { signal: this.#abort.signal }).catch(() => undefined);
  }
}
