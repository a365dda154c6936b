// The Manager holds what several controllers share in one process: the cache (one informer
// per kind, runtime/cache.ts), leader election, metrics and the health endpoints. Informers run on every replica
// (so a standby is ready to take over and /readyz is meaningful); controllers' workers run only
// on the leader, after every informer has synced. Losing the lease calls onLeadershipLost
// (main exits the process). stop() aborts and drains the workers, releases the lease, stops informers.
import type { Server } from 'node:http';
import { Cache } from './cache.ts';
import { Informer } from './informer.ts';
import type { KubeClient } from './kube.ts';
import { LeaderElector, type LeaderElectionOptions } from './leader.ts';
import type { Logger } from './log.ts';
import { startHealthServer, type Metrics } from './metrics.ts';
import type { MetricsAuthorizer } from './metrics-auth.ts';
import type { ReadyCheck, ReadyResult } from './ready-check.ts';

/**
 * What the Manager starts on the leader and stops on shutdown: a Controller, or a loop of the
 * same shape. `signal` aborts when the Manager stops; stop() resolves once no work of the
 * runnable is in flight any more (finished, or abandoned through the signal).
 */
export interface Runnable {
  start(signal: AbortSignal): void;
  stop(): Promise<void>;
  readonly started: boolean;
}

export interface ManagerOptions {
  client: KubeClient;
  /** The installation the cache is scoped to (label modeldock.io/instance; runtime/cache.ts), or undefined: every object of ModelDock's. */
  instance?: string;
  log: Logger;
  metrics: Metrics;
  /** Omit to run without leader election (single replica, tests). */
  leaderElection?: Omit<LeaderElectionOptions, 'log' | 'metrics'>;
  onLeadershipLost?: (reason: string) => void;
  healthPort?: number;
  informerDefaults?: { staleAfterMs?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  /** Guards /metrics (main.ts always sets it). */
  metricsAuth?: MetricsAuthorizer;
  /** More conditions of /readyz besides synced informers (e.g. the database answers). */
  readyChecks?: ReadyCheck[];
  /** How long stop() waits for in-flight reconciles before releasing the lease (default 10 s). */
  drainTimeoutMs?: number;
}

export class Manager {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The shared informer cache: controllers ask it for informers (one per kind). */
  readonly cache: Cache;
  readonly #o: ManagerOptions;
  readonly #controllers: Runnable[] = [];
  #elector: LeaderElector | undefined;
  readonly #abort = new AbortController();
  #server: Server | undefined;
  #stopping = false;
  #leading: Promise<void> | undefined;

  constructor(o: ManagerOptions) {
    this.#o = o;
    this.client = o.client;
    this.log = o.log;
    this.metrics = o.metrics;
    this.cache = new Cache(
      o.instance,
      (name, path, labelSelector) =>
        new Informer({ name, client: this.client, path, labelSelector, log: this.log, metrics: this.metrics, ...o.informerDefaults }),
    );
  }

  addController(c: Runnable): void {
    this.#controllers.push(c);
  }

  /** Every informer has completed its initial list. */
  ready(): boolean {
    return this.cache.informers.every((i) => i.synced);
  }

  /** /readyz: informers synced AND every readiness check passes. */
  async readiness(): Promise<ReadyResult> {
    if (!this.ready()) return { ok: false, reason: 'caches not synced' };
    for (const check of this.#o.readyChecks ?? []) {
      const r = await check();
      if (!r.ok) return r;
    }
    return { ok: true };
  }

  async start(): Promise<void> {
    if (this.#o.healthPort !== undefined) {
      this.#server = await startHealthServer({
        port: this.#o.healthPort,
        metrics: this.metrics,
        ready: () => this.readiness(),
        auth: this.#o.metricsAuth,
        onProblem: (level, msg, fields) => this.log[level](msg, fields),
      });
    }
    await Promise.all(this.cache.informers.map((i) => i.start()));
    const runControllers = async () => {
      await Promise.all(this.cache.informers.map((i) => i.waitForSync()));
      if (this.#stopping) return;
      for (const c of this.#controllers) c.start(this.#abort.signal);
    };
    const le = this.#o.leaderElection;
    if (!le) {
      this.#leading = runControllers();
      return;
    }
    this.#elector = new LeaderElector({ ...le, log: this.log, metrics: this.metrics });
    this.#leading = this.#elector.run({
      onStartedLeading: () => void runControllers(),
      onStoppedLeading: (reason) => {
        if (this.#stopping) return;
        this.log.error('leadership lost', { reason });
        this.#o.onLeadershipLost?.(reason);
      },
    });
  }

  /**
   * How long ago the leader Lease was last acquired or renewed (0 without leader election: a single
   * replica always leads). Work that must stop as soon as the API server is out of reach (the
   * cluster heartbeat) checks it rather than waiting for the renew deadline.
   */
  leaseAgeMs(): number {
    return this.#o.leaderElection ? (this.#elector?.sinceRenewedMs() ?? Infinity) : 0;
  }

  /** Whether the leader Lease's last renew that completed failed (false without leader election). */
  leaseRenewFailing(): boolean {
    return this.#o.leaderElection ? (this.#elector?.renewFailing() ?? true) : false;
  }

  /** Resolves when the controllers have started (leader) — tests and tools. */
  async waitForLeadership(): Promise<void> {
    for (;;) {
      if (this.#controllers.every((c) => c.started)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Shutdown: abort in-flight work (every API and database call carries the signal), wait until
   * every runnable has returned, and only then release the lease — so no fenced write of ours is
   * still on its way when a successor takes over. If something ignores the signal for longer than
   * `drainTimeoutMs`, the lease is NOT released: the successor waits out the lease instead.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#abort.abort(new Error('manager stopping'));
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      Promise.all(this.#controllers.map((c) => c.stop())).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.#o.drainTimeoutMs ?? 10_000))),
    ]);
    clearTimeout(timer);
    if (!drained) this.log.error('work still in flight after the drain timeout: keeping the lease (a successor waits for it to expire)');
    await this.#elector?.stop({ release: drained });
    await this.#leading?.catch(() => undefined);
    await Promise.all(this.cache.informers.map((i) => i.stop()));
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
