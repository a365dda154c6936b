// The Manager holds what several controllers share in one process: the informers (one cache
// per kind), leader election, metrics and the health endpoints. Informers run on every replica
// (so a standby is ready to take over and /readyz is meaningful); controllers' workers run only
// on the leader, after every informer has synced. Losing the lease calls onLeadershipLost
// (main exits the process). stop() drains the workers, releases the lease, stops informers.
import type { Server } from 'node:http';
import { Informer, type KubeObject } from './informer.ts';
import type { KubeClient } from './kube.ts';
import { LeaderElector, type LeaderElectionOptions } from './leader.ts';
import type { Logger } from './log.ts';
import { startHealthServer, type Metrics } from './metrics.ts';
import type { MetricsAuthorizer } from './metrics-auth.ts';
import type { ReadyCheck, ReadyResult } from './ready-check.ts';

/** What the Manager starts on the leader and drains on shutdown: a Controller, or a loop of the same shape. */
export interface Runnable {
  start(): void;
  stop(): Promise<void>;
  readonly started: boolean;
}

export interface ManagerOptions {
  client: KubeClient;
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
  readonly #o: ManagerOptions;
  readonly #informers: Array<Informer<KubeObject>> = [];
  readonly #controllers: Runnable[] = [];
  #elector: LeaderElector | undefined;
  #server: Server | undefined;
  #stopping = false;
  #leading: Promise<void> | undefined;

  constructor(o: ManagerOptions) {
    this.#o = o;
    this.client = o.client;
    this.log = o.log;
    this.metrics = o.metrics;
  }

  /** Registers an informer on a collection path (call before start). */
  informer<T extends KubeObject>(name: string, path: string, labelSelector?: string): Informer<T> {
    const inf = new Informer<T>({
      name,
      client: this.client,
      path,
      labelSelector,
      log: this.log,
      metrics: this.metrics,
      ...this.#o.informerDefaults,
    });
    this.#informers.push(inf as unknown as Informer<KubeObject>);
    return inf;
  }

  addController(c: Runnable): void {
    this.#controllers.push(c);
  }

  /** Every informer has completed its initial list. */
  ready(): boolean {
    return this.#informers.every((i) => i.synced);
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
    await Promise.all(this.#informers.map((i) => i.start()));
    const runControllers = async () => {
      await Promise.all(this.#informers.map((i) => i.waitForSync()));
      if (this.#stopping) return;
      for (const c of this.#controllers) c.start();
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

  /** Resolves when the controllers have started (leader) — tests and tools. */
  async waitForLeadership(): Promise<void> {
    for (;;) {
      if (this.#controllers.every((c) => c.started)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Graceful shutdown: drain in-flight reconciles, release the lease, stop the informers. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    // Drain in-flight reconciles, but not for so long that main's forced exit (20 s) comes
    // before the lease is released: a successor would then wait out the whole lease.
    const drained = Promise.all(this.#controllers.map((c) => c.stop()));
    const limit = new Promise<void>((resolve) => setTimeout(resolve, this.#o.drainTimeoutMs ?? 10_000).unref());
    await Promise.race([drained, limit]);
    await this.#elector?.stop();
    await this.#leading?.catch(() => undefined);
    await Promise.all(this.#informers.map((i) => i.stop()));
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
