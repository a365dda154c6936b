// Wires the ledger into a Manager: one Controller keyed by reservation id, the outbox poller
// feeding it, and (unless disabled) the informer fast paths — a ModelService or a pod carrying
// an admission id changed — plus a bounded periodic resync over the open reservations
// (resync.ts). With the fast paths off, only outbox rows (deliveries, deletes, the cron's
// reconcile rows) drive it. Delivered/ready reservations are decided on the shared
// ModelService informer's cache; the ledger's live reads and writes go through `client`
// (controller/main.ts gives it a read rate limit of its own).
import type { Db } from '../../ledger/db.ts';
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import { Controller } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { KubeObject } from '../runtime/informer.ts';
import type { KubeClient } from '../runtime/kube.ts';
import type { Manager } from '../runtime/manager.ts';
import { OutboxPoller } from './poller.ts';
import { kubeLedgerCluster } from './cluster.ts';
import { ledgerMetrics } from './metrics.ts';
import { ledgerReconciler, type LedgerDeps } from './reconcile.ts';
import { ResyncLoop, resyncOnce } from './resync.ts';
import { acquireEpoch } from './store.ts';

export interface LedgerOptions {
  db: Db;
  namespace: string;
  holder: string;
  config: LedgerDeps['config'];
  fastPaths: boolean;
  workers: number;
  resyncMs: number;
  /** Rows per resync page (default 500). */
  resyncPageSize?: number;
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

  const metrics = ledgerMetrics(mgr.metrics.registry);
  const modelServices = mgr.cache.informer<ModelService & KubeObject>('ModelService');
  const reconcile = ledgerReconciler({
    db: o.db,
    cluster: (signal) => kubeLedgerCluster((o.client ?? mgr.client).withSignal(signal), (kind) => metrics.liveReads.inc({ kind })),
    cachedModelService: (ns, name) => (modelServices.synced ? (modelServices.get(ns, name) ?? null) : undefined),
    namespace: o.namespace,
    epoch,
    now: () => new Date(),
    config: o.config,
    takeClaims: (id) => poller.take(id), // runs only after start, when `poller` exists
    keepClaims: (rows) => poller.restore(rows),
    metrics,
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
  const resyncOptions = { db: o.db, enqueue: (id: string) => controller.enqueue(id), pageSize: o.resyncPageSize ?? 500, now: () => new Date(), onPage: () => metrics.resyncPages.inc() };
  const resync = new ResyncLoop(o.fastPaths ? o.resyncMs : 0, async (signal) => {
    const { pages, enqueued } = await resyncOnce(resyncOptions, signal);
    log.debug('ledger resync', { pages, enqueued });
  }, log);

  mgr.addController(controller);
  mgr.addController(poller);
  mgr.addController(resync);
  return { controller, poller };
}
