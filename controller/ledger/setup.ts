// Wires the ledger into a Manager: one Controller keyed by reservation id, the outbox poller
// feeding it, and (unless disabled) the informer fast paths — a ModelService or a pod carrying
// an admission id changed — plus a periodic resync over every open reservation. With the fast
// paths off, only outbox rows (deliveries, deletes, the cron's reconcile rows) drive it.
import type { Db } from '../../ledger/db.ts';
import { LABELS } from '../../schema/model-service.ts';
import { Controller } from '../runtime/controller.ts';
import { childAbort } from '../runtime/abort.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { KubeObject } from '../runtime/informer.ts';
import type { KubeClient } from '../runtime/kube.ts';
import type { Manager } from '../runtime/manager.ts';
import type { Backoff } from './outbox-store.ts';
import { OutboxPoller } from './poller.ts';
import { kubeLedgerCluster } from './cluster.ts';
import type { LedgerConfig } from './decide.ts';
import { ledgerMetrics } from './metrics.ts';
import { ledgerReconciler } from './reconcile.ts';
import { acquireEpoch, openReservationIds } from './store.ts';

export interface LedgerOptions {
  db: Db;
  namespace: string;
  holder: string;
  config: LedgerConfig & { outboxBackoff: Backoff };
  fastPaths: boolean;
  workers: number;
  resyncMs: number;
  /** Cap of a failing reservation's retry delay (per-key backoff; default 10 s, see main.ts). */
  retryMaxMs?: number;
  events?: EventRecorder;
  client?: KubeClient;
  poll?: { minIntervalMs?: number; maxIntervalMs?: number; leaseMs?: number; batch?: number };
}

export const LEDGER_CONTROLLER = 'ledger';

export function setupLedger(mgr: Manager, o: LedgerOptions): { controller: Controller; poller: OutboxPoller } {
  const log = mgr.log.child({ controller: LEDGER_CONTROLLER });
  // The fencing epoch: bumped once when this process first acts as leader (it exits when it
  // loses the lease, so one acquisition per process is one per leadership).
  let acquired: Promise<number> | undefined;
  const epoch = (): Promise<number> =>
    (acquired ??= acquireEpoch(o.db, o.holder, new Date()).then(
      (e) => {
        log.info('controller epoch acquired', { epoch: e });
        return e;
      },
      (err: unknown) => {
        acquired = undefined;
        throw err;
      },
    ));

  const reconcile = ledgerReconciler({
    db: o.db,
    cluster: (signal) => kubeLedgerCluster((o.client ?? mgr.client).withSignal(signal)),
    namespace: o.namespace,
    epoch,
    now: () => new Date(),
    config: o.config,
    takeClaims: (id) => poller.take(id), // runs only after start, when `poller` exists
    keepClaims: (rows) => poller.restore(rows),
    metrics: ledgerMetrics(mgr.metrics.registry),
    events: o.events,
    log,
  });
  const controller = new Controller({
    name: LEDGER_CONTROLLER,
    workers: o.workers,
    // Ledger reconciles are cheap, and an outage fails every key at once: a short cap means the
    // ledger resumes within seconds of the database coming back, not after minutes of backoff.
    maxDelayMs: o.retryMaxMs ?? 10_000,
    log: mgr.log,
    metrics: mgr.metrics,
    reconcile: (req, ctx) => reconcile(req.name, ctx.signal),
  });
  const poller = new OutboxPoller({ db: o.db, holder: o.holder, epoch, enqueue: (id) => controller.enqueue(id), log, ...o.poll });

  if (o.fastPaths) {
    const byAdmission = (obj: KubeObject) => controller.enqueue(obj.metadata.labels?.[LABELS.admissionId]);
    for (const inf of [mgr.cache.informer('ModelService'), mgr.cache.informer('Pod')]) {
      inf.addHandlers({ add: byAdmission, update: byAdmission, delete: byAdmission });
    }
  }
  if (!o.fastPaths && o.resyncMs > 0) log.warn('LEDGER_FAST_PATHS=false: the periodic ledger resync is off too; only outbox rows drive the ledger');
  const resync = new ResyncLoop(o.fastPaths ? o.resyncMs : 0, async (signal) => {
    for (const id of await openReservationIds(o.db.withSignal(signal))) controller.enqueue(id);
  }, log);

  mgr.addController(controller);
  mgr.addController(poller);
  mgr.addController(resync);
  return { controller, poller };
}

/** Runs `tick` at start and then every `everyMs` (jittered) while leading; 0 disables it. */
class ResyncLoop {
  readonly #everyMs: number;
  readonly #tick: (signal: AbortSignal) => Promise<void>;
  readonly #log: Manager['log'];
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #abort = new AbortController();
  #running: Promise<void> | undefined;

  constructor(everyMs: number, tick: (signal: AbortSignal) => Promise<void>, log: Manager['log']) {
    this.#everyMs = everyMs;
    this.#tick = tick;
    this.#log = log;
  }

  get started(): boolean {
    return this.#started;
  }

  start(signal?: AbortSignal): void {
    this.#started = true;
    this.#abort = childAbort(signal);
    if (this.#everyMs > 0) this.#running = this.#run();
  }

  async stop(): Promise<void> {
    this.#started = false;
    clearTimeout(this.#timer);
    this.#abort.abort(new Error('ledger resync stopping'));
    await this.#running;
  }

  async #run(): Promise<void> {
    if (!this.#started) return;
    await this.#tick(this.#abort.signal).catch((err: unknown) => {
      if (this.#started) this.#log.warn('ledger resync failed', { err: errorMessage(err) });
    });
    if (!this.#started) return;
    this.#timer = setTimeout(() => (this.#running = this.#run()), this.#everyMs * (0.9 + Math.random() * 0.2));
    this.#timer.unref();
  }
}
