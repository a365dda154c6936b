// Wires the ledger into a Manager: one Controller keyed by (tenant, reservation id) (key.ts), the outbox poller
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
import { RecordPrefetch } from './prefetch.ts';
import { AckGroups } from './ack-group.ts';
import { OwnCreations } from './own-creations.ts';
import { ackCreate, ackCreates } from './transitions.ts';
import { kubeReservationCluster } from './cluster.ts';
import { ledgerMetrics } from './metrics.ts';
import { reservationReconciler } from './reconcile.ts';
import type { ReservationDeps } from './reconcile-deps.ts';
import { resyncOnce } from './resync.ts';
import { PeriodicLoop } from '../runtime/periodic.ts';
import { queueSweepOnce } from './queue-trigger.ts';
import { Autoscaler, autoscaleLedger } from '../autoscale/autoscaler.ts';
import { autoscaleMetrics } from '../autoscale/metrics.ts';
import { scrapePods } from '../autoscale/scrape.ts';
import type { ScrapedPod } from '../autoscale/scrape.ts';
import { shardCache, shardDb } from '../../ledger/shards.ts';
import { reservationKey, type ReservationKey } from './key.ts';
import { leaderFence } from './leader-fence.ts';
import { readHardQuota } from '../tenant/hard-quota.ts';
import { TenantSpaces, type TenantSpaceOptions } from '../tenant/space.ts';
import { createPlacer, type Placer } from '../../ledger/placement.ts';
import type { PlacementPolicy } from '../../ledger/placement-policy.ts';

export interface ReservationControllerOptions {
  db: Db;
  /** The cluster this controller serves (CLUSTER; `default`: the unregistered cluster of a single-cluster install). */
  cluster: string;
  /** How admissions leaving the queue are placed (ledger/placement-policy.ts); default: least-loaded. */
  placementPolicy?: PlacementPolicy;
  /** Tenant namespaces: their naming, quota and network settings (controller/tenant/space.ts). */
  tenants: Omit<TenantSpaceOptions, 'readHard' | 'cache' | 'log'>;
  /** How often every tenant namespace's quota and policies are brought in step (default: resyncMs; 0 = never). */
  tenantSyncMs?: number;
  /** How often the controller's queue sweep looks for tenants with queued admissions (default QUEUE_SWEEP_MS; 0 = never). */
  queueSweepMs?: number;
  holder: string;
  /** The API server's time (runtime/server-clock.ts); default: this process's clock. */
  apiServerNow?: () => Date;
  config: ReservationDeps['config'];
  fastPaths: boolean;
  workers: number;
  resyncMs: number;
  /** Rows per resync page (default 500). */
  resyncPageSize?: number;
  /** How long the ledger's shard list is trusted before it is read again (default 60 s). */
  shardsTtlMs?: number;
  /** Cap of a failing reservation's retry delay (per-key backoff; default 10 s, see main.ts). */
  retryMaxMs?: number;
  events?: EventRecorder;
  client?: KubeClient;
  poll?: { minIntervalMs?: number; maxIntervalMs?: number; leaseMs?: number; batch?: number };
  /** The autoscaler (controller/autoscale/): its tick (0 = off) and its pod reads. */
  autoscale?: Partial<typeof AUTOSCALER_LOOP_DEFAULTS>;
}

/** The autoscaler's loop: a tick every 2 s (Knative's), each pod's /metrics within 1 s, 16 reads at once per admission. */
export const AUTOSCALER_LOOP_DEFAULTS = { tickMs: 2_000, scrapeTimeoutMs: 1_000, scrapeConcurrency: 16 };

export const LEDGER_CONTROLLER = 'ledger';
/** The controller's queue sweep: the safety net of the dequeue after each release (a statement per shard when nothing is queued). */
export const QUEUE_SWEEP_MS = 10_000;

export function setupReservationController(mgr: Manager, o: ReservationControllerOptions): { controller: Controller; poller: OutboxPoller; placer: Placer } {
  const log = mgr.log.child({ controller: LEDGER_CONTROLLER });
  // The fence: the epoch is bumped once when this process first acts as leader (it exits when it
  // loses the lease, so one acquisition per process is one per leadership).
  const fence = leaderFence({ db: o.db, cluster: o.cluster, holder: o.holder, now: () => new Date(), log });
  // One shard list for the poller, the resync, the queue sweep and placement.
  const shardsOf = shardCache(o.shardsTtlMs ?? 60_000);
  const shards = () => shardsOf(o.db);
  const placer = createPlacer({ ...(o.placementPolicy ? { policy: o.placementPolicy } : {}), shards: shardsOf });

  const metrics = ledgerMetrics(mgr.metrics.registry);
  const modelServices = mgr.cache.informer<ModelService & KubeObject>('ModelService');
  const spaces = new TenantSpaces({
    ...o.tenants,
    readHard: (tenant, signal) => readHardQuota(o.db.withSignal(signal), tenant),
    cache: { namespaces: mgr.cache.informer('Namespace'), quotas: mgr.cache.informer('ResourceQuota'), policies: mgr.cache.informer('NetworkPolicy') },
    log,
  });
  const prefetch = new RecordPrefetch();
  const own = new OwnCreations();
  const acks = new AckGroups({
    one: (a) => ackCreate(o.db, a.row, a.cr, new Date()),
    group: (group) => ackCreates(shardDb(o.db, group[0]?.row.claim.shard ?? ''), group, new Date()),
    onGroup: (size) => metrics.ackGroups.observe(size),
  });
  const reconcile = reservationReconciler({
    db: o.db,
    cluster: (signal) =>
      kubeReservationCluster((o.client ?? mgr.client).withSignal(signal), {
        onLiveRead: (kind) => metrics.liveReads.inc({ kind }),
        ensureTenantSpace: (tenant, client) => spaces.ensure(tenant, client, signal),
      }),
    cachedModelService: (ns, name) => (modelServices.synced ? (modelServices.get(ns, name) ?? null) : undefined),
    namespaceFor: (tenant) => spaces.namespaceFor(tenant),
    instance: o.tenants.instance,
    fence,
    placer,
    now: () => new Date(),
    apiServerNow: o.apiServerNow,
    config: o.config,
    takeClaims: (id) => poller.take(id), // runs only after start, when `poller` exists
    keepClaims: (rows) => poller.restore(rows),
    prefetched: (key) => prefetch.take(key),
    ackDelivery: (a) => acks.ack(a),
    created: (obj) => own.note(obj),
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
    reconcile, // its key is `<tenant>/<id>` (key.ts)
  });
  const poller = new OutboxPoller({
    shards,
    holder: o.holder,
    fence,
    enqueue: (row) => controller.enqueueWork(reservationKey({ tenant: row.tenant, id: row.reservationId })),
    prefetch: (shard, rows) => prefetch.load(shard, rows),
    log,
    ...o.poll,
  });

  if (o.fastPaths) {
    // The CR and its pods carry the admission id and the tenant (labels set at delivery).
    const byAdmission = (obj: KubeObject) => {
      const id = obj.metadata.labels?.[LABELS.admissionId];
      const tenant = obj.metadata.labels?.[LABELS.tenant];
      if (id && tenant) controller.enqueue(reservationKey({ tenant, id }));
    };
    const added = (obj: KubeObject) => {
      if (!own.isEcho(obj)) return byAdmission(obj);
      metrics.ownCreateEvents.inc();
    };
    modelServices.addHandlers({ add: added, update: byAdmission, delete: byAdmission });
    mgr.cache.informer('Pod').addHandlers({ add: byAdmission, update: byAdmission, delete: byAdmission });
  }
  if (!o.fastPaths && o.resyncMs > 0) log.warn('LEDGER_FAST_PATHS=false: the periodic ledger resync is off too; only outbox rows drive the ledger');
  const resyncOptions = { shards, cluster: o.cluster, enqueue: (key: ReservationKey) => controller.enqueue(reservationKey(key)), pageSize: o.resyncPageSize ?? 500, now: () => new Date(), onPage: () => metrics.resyncPages.inc() };
  const resync = new PeriodicLoop(o.fastPaths ? o.resyncMs : 0, async (signal) => {
    const { pages, enqueued } = await resyncOnce(resyncOptions, signal);
    log.debug('ledger resync', { pages, enqueued });
  }, log, 'ledger resync');

  const queueSweep = new PeriodicLoop(o.queueSweepMs ?? QUEUE_SWEEP_MS, async (signal) => {
    const tenants = await queueSweepOnce({ db: o.db, now: () => new Date(), metrics, placer, fence }, log, signal);
    if (tenants > 0) log.debug('queue sweep', { tenants });
  }, log, 'queue sweep');

  const tenantSync = new PeriodicLoop(o.tenantSyncMs ?? o.resyncMs, async (signal) => {
    const { tenants, failed } = await spaces.sync((o.client ?? mgr.client).withSignal(signal), signal);
    log.debug('tenant namespaces brought in step', { tenants, failed });
  }, log, 'tenant namespace sync');

  const as = { ...AUTOSCALER_LOOP_DEFAULTS, ...o.autoscale };
  const pods = mgr.cache.informer<ScrapedPod & KubeObject>('Pod');
  const autoscaler = new Autoscaler({
    ledger: autoscaleLedger(o.db, placer),
    modelServices: () => modelServices.list(),
    pods: (ns) => pods.list(ns),
    scrape: (targets, signal) => scrapePods(targets, { fetch, timeoutMs: as.scrapeTimeoutMs, concurrency: as.scrapeConcurrency }, signal),
    epochFor: (tenant) => fence.forTenants([tenant]),
    now: () => Date.now(),
    metrics: autoscaleMetrics(mgr.metrics.registry),
    log: log.child({ loop: 'autoscaler' }),
  });
  const autoscaleLoop = new PeriodicLoop(as.tickMs, (signal) => autoscaler.tick(signal), log, 'autoscaler');

  mgr.addController(controller);
  mgr.addController(poller);
  mgr.addController(autoscaleLoop);
  mgr.addController(resync);
  mgr.addController(tenantSync);
  mgr.addController(queueSweep);
  return { controller, poller, placer };
}
