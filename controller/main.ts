// The ModelDock controller process: wiring only. Tunables come from the environment (zod-validated):
//   KUBECONFIG          kubeconfig file; unset → ~/.kube/config or the in-cluster service account
//   NAMESPACE           the controller's own namespace: its lease (default modeldock-system). Tenants'
//                       objects live in namespaces of their own (docs/tenancy.md), created by the controller:
//   TENANT_NAMESPACE_PREFIX  tenant namespaces are <prefix><tenant> (default md-; hashed when over 63 characters)
//   INSTANCE            optional: the label modeldock.io/instance=<INSTANCE> on everything this controller
//                       creates, and the only objects it watches (several installations in one cluster)
//   MAX_REPLICAS        the Worker's MAX_REPLICAS (default 16): a tenant namespace's pods quota is its
//                       count quota times this
//   TENANT_SYNC_MS      every tenant namespace's ResourceQuota and NetworkPolicies are brought in step with
//                       the ledger and these settings this often (default LEDGER_RESYNC_MS)
//   TENANT_GATEWAY_NAMESPACE_LABELS, TENANT_GATEWAY_POD_LABELS  JSON objects: the gateway's namespaces and
//                       its pods there, which may connect to tenant pods (default
//                       {"modeldock.io/gateway":"true"} and {"app.kubernetes.io/name":"modeldock-gateway"})
//   TENANT_CONTROLLER_NAMESPACE_LABELS, TENANT_CONTROLLER_POD_LABELS  JSON objects: this controller's
//                       namespace and its pods there, the only other pods that may connect to tenant pods
//                       (the autoscaler reads their /metrics; default {"kubernetes.io/metadata.name":"<NAMESPACE>"}
//                       and {"app.kubernetes.io/name":"modeldock-controller"}, k8s/base/controller.yaml's pod label)
//   TENANT_INGRESS_CIDRS  comma-separated CIDRs outside the cluster that may connect to tenant pods (default none)
//   TENANT_EGRESS_ALLOW comma-separated CIDRs tenant pods may connect to besides DNS (default none)
//   TENANT_EGRESS_DENY  comma-separated CIDRs never reachable even inside an allowed one: the cluster's pod,
//                       Service and node ranges and the API server (169.254.0.0/16 is always denied)
//   WORKERS             concurrent reconciles of the ModelService controller (default 8; a first reconcile
//                       sends its two creates together: up to 16 writes in flight)
//   QPS, BURST          client-side rate limit of API writes; default -1 = none: the API server's
//                       Priority and Fairness bounds us (SIG API Machinery's advice, controller-runtime's
//                       default since v0.21); QPS > 0 sets a token bucket (BURST default 40)
//   EVENT_QPS, EVENT_BURST  the Events' own rate limit, apart from QPS/BURST (default 10/s, burst 50)
//   LEADER_ELECT        "false" runs without leader election (one replica only!)
//   LEASE_NAME, LEASE_DURATION_MS, LEASE_RENEW_DEADLINE_MS, LEASE_RETRY_PERIOD_MS (15 s/10 s/2 s)
//   METRICS_PORT        /metrics (bearer token: TokenReview + SubjectAccessReview), /healthz, /readyz (default 8080)
//   METRICS_AUTH_ALLOW_TTL_MS, METRICS_AUTH_DENY_TTL_MS  how long a /metrics decision is cached (60 s / 10 s)
//   RESYNC_MS           re-enqueue every ModelService this often (default 10 min)
//   BATCH_DELAY_MS      events for one key within this window cost one reconcile (default 100)
//   INFORMER_STALE_MS   rebuild an informer that saw nothing for this long (default 5 min)
//   LOG_LEVEL           debug | info | warn | error
//   POD_NAME            identity in the lease (default: hostname + random suffix)
//   DATABASE_URL        the MySQL ledger (PlanetScale HTTP API); REQUIRED unless LEDGER=off
//   LEDGER              "off" runs without outbox and ledger (ModelService reconciling only)
//   READY_DB_TTL_MS, READY_DB_TIMEOUT_MS  /readyz's `SELECT 1`: answer cached 5 s, deadline 2 s
//   LEDGER_WORKERS      concurrent reservation reconciles (default 32: a delivery is 5 database round
//                       trips and one API write (docs/design.md), mostly waiting; a burst of 200 admissions: p99
//                       3.9 s with 8, 2.7 s with 32, bench B4)
//   READY_DEADLINE_MS   a ModelService never Ready this long after creation is deleted (default 10 min)
//   RELEASE_BLOCKED_AFTER_MS  pods still present this long into a release → ReleaseBlocked (default 2 min)
//   OUTBOX_BACKOFF_BASE_MS, OUTBOX_BACKOFF_CAP_MS  retry delay of a failed outbox row: base·2^n, jittered,
//                       capped (default 1 s, 5 min); a row is retried until done, dead only if it cannot succeed
//   OUTBOX_LEASE_MS     claim lease of an outbox row (default 60 s)
//   LEDGER_FAST_PATHS   "false": only outbox rows (incl. the cron's reconcile rows) drive the ledger
//   LEDGER_RESYNC_MS    re-check every open reservation this often (default 60 s; 0 = off)
//   ALLOWED_IMAGE_REGISTRIES  host[:port][/path] list re-checked at delivery (the Worker's policy), or * for any;
//                       REQUIRED unless LEDGER=off: empty or absent exits with the reason
//   LEDGER_RESYNC_PAGE  open reservations read per resync statement (default 500)
//   LEDGER_READ_QPS, LEDGER_READ_BURST  rate limit of the ledger's live API reads (default 20/s, burst 40)
//   CLUSTER             optional: the cluster (`npm run cluster -- add <name>`) this controller serves. Once it
//                       leads, it takes the cluster over in the ledger (a new cluster epoch; a joining cluster
//                       becomes ready and takes placements) and sends a heartbeat every third of the cluster's
//                       lease; a heartbeat that finds the epoch moved on exits, as a lost Lease does
//                       (controller/cluster/heartbeat.ts). It claims only the outbox rows routed to this cluster,
//                       resyncs only the admissions placed on it, and is fenced per (tenant, cluster), so the
//                       controllers of two clusters never fence each other. Unset: the controller serves the
//                       unregistered cluster `default` (a single-cluster install) and takes no cluster over
//   PLACEMENT_POLICY    where an admission leaving the queue is placed among the clusters: least-loaded (default) or
//                       affinity (ledger/placement-policy.ts); set it as the Worker's
//   AUTOSCALE_TICK_MS   how often the autoscaler reads the load of autoscaled admissions and decides (default 2 s; 0 = off)
//   AUTOSCALE_SCRAPE_TIMEOUT_MS, AUTOSCALE_SCRAPE_CONCURRENCY  deadline of one pod's /metrics read (default 1 s) and
//                       reads in flight at once per admission (default 16); the controller reaches the pods over the pod network
//   LEDGER_RETRY_MAX_MS cap of a failing reservation's retry delay (per-key backoff, default 10 s)
//   POD_NODE_SELECTOR   where tenant pods run (README "Placement"), JSON, unset/empty = none: an object of
//                       node labels, e.g. {"pool":"models"}; POD_TOLERATIONS a JSON array of core/v1
//                       Tolerations; POD_AFFINITY a JSON core/v1 Affinity. Tenants cannot set placement.
//   POD_GPU_NODE_SELECTOR, POD_GPU_TOLERATIONS  added to the above for pods that request nvidia.com/gpu
//                       (changing any of these rolls every ModelService's pods on the next reconcile)
//   MODELDOCK_CRASH_AT  test-only crash injection, see runtime/crash.ts
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { prune } from './runtime/apply.ts';
import { KubeEventRecorder } from './runtime/events.ts';
import { KubeClient } from './runtime/kube.ts';
import { createLogger } from './runtime/log.ts';
import { Manager } from './runtime/manager.ts';
import { Metrics } from './runtime/metrics.ts';
import { MetricsAuthorizer, kubeReviewApi } from './runtime/metrics-auth.ts';
import { cachedCheck } from './runtime/ready-check.ts';
import { TokenBucket } from './runtime/rate-limit.ts';
import { setupModelServiceController } from './modelservice/setup.ts';
import { AUTOSCALER_LOOP_DEFAULTS, setupReservationController } from './reservation/setup.ts';
import { ServerClock } from './runtime/server-clock.ts';
import { createDb } from '../ledger/db.ts';
import { placementFrom, placementSettings } from '../schema/placement.ts';
import { DEFAULT_MAX_REPLICAS } from '../schema/admission.ts';
import { dns1123Label } from '../schema/model-service.ts';
import { namespacePrefixSetting } from '../schema/tenant-namespace.ts';
import { tenantNetworkEnv, tenantNetworkFrom } from './tenant/network-settings.ts';
import { allowsAnyRegistry, parseRegistryList, PolicyError, type RegistryRule } from '../schema/policy.ts';
import { CLUSTER_NAME, UNREGISTERED_CLUSTER } from '../ledger/clusters.ts';
import { ClusterMember, clusterLedger, clusterMetrics } from './cluster/heartbeat.ts';
import { createSupervisor, SUPERVISE_MS, supervisorLedger, supervisorMetrics } from './cluster/supervisor.ts';
import { PeriodicLoop } from './runtime/periodic.ts';
import { DEFAULT_PLACEMENT_POLICY, PLACEMENT_POLICIES, placementPolicy } from '../ledger/placement-policy.ts';

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const parsed = z
  .object({
    KUBECONFIG: z.string().optional(),
    NAMESPACE: z.string().min(1).default('modeldock-system'),
    TENANT_NAMESPACE_PREFIX: namespacePrefixSetting,
    INSTANCE: dns1123Label.optional(),
    MAX_REPLICAS: int(DEFAULT_MAX_REPLICAS, 1),
    TENANT_SYNC_MS: z.coerce.number().int().min(0).optional(),
    ...tenantNetworkEnv,
    WORKERS: int(8, 1),
    QPS: z.coerce.number().refine((q) => q > 0 || q === -1, 'must be > 0, or -1 for no client-side limit').default(-1),
    BURST: int(40, 1),
    EVENT_QPS: z.coerce.number().positive().default(10),
    EVENT_BURST: int(50, 1),
    LEADER_ELECT: z.enum(['true', 'false']).default('true'),
    LEASE_NAME: z.string().min(1).default('modeldock-controller'),
    LEASE_DURATION_MS: int(15_000, 1000),
    LEASE_RENEW_DEADLINE_MS: int(10_000, 500),
    LEASE_RETRY_PERIOD_MS: int(2_000, 100),
    METRICS_PORT: int(8080),
    RESYNC_MS: int(600_000),
    BATCH_DELAY_MS: int(100),
    INFORMER_STALE_MS: int(300_000, 1000),
    LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    POD_NAME: z.string().optional(),
    DATABASE_URL: z.string().url().optional(),
    LEDGER: z.enum(['on', 'off']).default('on'),
    READY_DB_TTL_MS: int(5_000),
    READY_DB_TIMEOUT_MS: int(2_000, 100),
    METRICS_AUTH_ALLOW_TTL_MS: int(60_000),
    METRICS_AUTH_DENY_TTL_MS: int(10_000),
    LEDGER_WORKERS: int(32, 1),
    READY_DEADLINE_MS: int(600_000, 1000),
    RELEASE_BLOCKED_AFTER_MS: int(120_000),
    OUTBOX_BACKOFF_BASE_MS: int(1_000, 1),
    OUTBOX_BACKOFF_CAP_MS: int(300_000, 1),
    OUTBOX_LEASE_MS: int(60_000, 1000),
    LEDGER_FAST_PATHS: z.enum(['true', 'false']).default('true'),
    LEDGER_RESYNC_MS: int(60_000),
    ALLOWED_IMAGE_REGISTRIES: z.string().optional(),
    LEDGER_RESYNC_PAGE: int(500, 1),
    LEDGER_READ_QPS: z.coerce.number().positive().default(20),
    LEDGER_READ_BURST: int(40, 1),
    LEDGER_RETRY_MAX_MS: int(10_000, 10),
    AUTOSCALE_TICK_MS: int(AUTOSCALER_LOOP_DEFAULTS.tickMs),
    AUTOSCALE_SCRAPE_TIMEOUT_MS: int(AUTOSCALER_LOOP_DEFAULTS.scrapeTimeoutMs, 50),
    AUTOSCALE_SCRAPE_CONCURRENCY: int(AUTOSCALER_LOOP_DEFAULTS.scrapeConcurrency, 1),
    ...placementSettings,
    CLUSTER: z.string().regex(CLUSTER_NAME, 'must be a cluster name (a DNS label)').optional(),
    PLACEMENT_POLICY: z.enum(Object.keys(PLACEMENT_POLICIES) as [string, ...string[]]).default(DEFAULT_PLACEMENT_POLICY),
  })
  .safeParse(process.env);
if (!parsed.success) fatal(`invalid environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
const env = parsed.data;
if (env.CLUSTER && env.LEDGER === 'off') fatal('CLUSTER needs the ledger (LEDGER=off has none)');
if (env.LEDGER === 'on' && !env.DATABASE_URL) {
  fatal('DATABASE_URL is not set: the controller needs the ledger database (set LEDGER=off to run without outbox and ledger)');
}

// The image policy is delivery's: without the ledger nothing is delivered, and the list may be absent.
let allowedRegistries: RegistryRule[] = [];
if (env.LEDGER === 'on' || env.ALLOWED_IMAGE_REGISTRIES !== undefined) {
  try {
    allowedRegistries = parseRegistryList(env.ALLOWED_IMAGE_REGISTRIES);
  } catch (err) {
    fatal(err instanceof PolicyError ? err.message : String(err));
  }
}

const placement = placementFrom(env);
const tenantNetwork = tenantNetworkFrom(env, env.NAMESPACE);

/** One line on stderr, exit 2: a misconfiguration a restart will not fix. */
function fatal(reason: string): never {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: `exiting: ${reason}` })}\n`);
  process.exit(2);
}

const log = createLogger({ level: env.LOG_LEVEL });
const identity = `${env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
const kc = new KubeConfig();
if (env.KUBECONFIG) kc.loadFromFile(env.KUBECONFIG);
else kc.loadFromDefault();

const metrics = new Metrics({ processMetrics: true });
const fieldManager = 'modeldock-controller';
const writes = env.QPS > 0 ? new TokenBucket({ qps: env.QPS, burst: env.BURST }) : undefined;
// The API server's clock, from the Date header of every answer to these clients (its informers',
// the ledger's, the lease's): the never-Ready deadline runs on it, not on this process's clock.
const serverClock = new ServerClock();
const client = new KubeClient({ kc, metrics, fieldManager, limiter: writes, serverClock });
// The ledger's live reads (release decisions) are rate limited; with a write budget (QPS > 0) its
// writes share it, ahead of the ModelService reconciles' (an admission's CR is not queued behind a burst).
const ledgerClient = new KubeClient({ kc, metrics, fieldManager, limiter: writes, serverClock, priority: 'high', readLimiter: new TokenBucket({ qps: env.LEDGER_READ_QPS, burst: env.LEDGER_READ_BURST }) });
// Lease renewals never wait behind reconcile writes, and give up before the renew deadline.
const leaseClient = new KubeClient({ kc, metrics, fieldManager, serverClock, timeoutMs: Math.floor(env.LEASE_RENEW_DEADLINE_MS / 2) });

// /metrics reviews use a client of their own: not rate-limited behind reconcile writes, not counted as writes.
const reviewClient = new KubeClient({ kc, timeoutMs: 5_000 });
const metricsAuth = new MetricsAuthorizer({ api: kubeReviewApi(reviewClient), allowTtlMs: env.METRICS_AUTH_ALLOW_TTL_MS, denyTtlMs: env.METRICS_AUTH_DENY_TTL_MS });
const db = env.LEDGER === 'on' && env.DATABASE_URL ? createDb({ url: env.DATABASE_URL }) : undefined;

const mgr = new Manager({
  client,
  instance: env.INSTANCE,
  log,
  metrics,
  healthPort: env.METRICS_PORT,
  metricsAuth,
  readyChecks: db ? [cachedCheck('database', () => db.execute('SELECT 1'), { ttlMs: env.READY_DB_TTL_MS, timeoutMs: env.READY_DB_TIMEOUT_MS })] : [],
  informerDefaults: { staleAfterMs: env.INFORMER_STALE_MS },
  leaderElection:
    env.LEADER_ELECT === 'true'
      ? {
          client: leaseClient,
          namespace: env.NAMESPACE,
          name: env.LEASE_NAME,
          identity,
          leaseDurationMs: env.LEASE_DURATION_MS,
          renewDeadlineMs: env.LEASE_RENEW_DEADLINE_MS,
          retryPeriodMs: env.LEASE_RETRY_PERIOD_MS,
        }
      : undefined,
  onLeadershipLost: (reason) => {
    log.error('exiting: leadership lost', { reason });
    process.exit(1);
  },
});
// Events have a budget of their own: they never wait in front of (or behind) a reconcile write.
const eventClient = new KubeClient({ kc, metrics, fieldManager, limiter: new TokenBucket({ qps: env.EVENT_QPS, burst: env.EVENT_BURST }) });
const events = new KubeEventRecorder({ client: eventClient, controller: 'modeldock.io/controller', instance: identity, log });
setupModelServiceController(mgr, {
  workers: env.WORKERS,
  resyncMs: env.RESYNC_MS,
  batchDelayMs: env.BATCH_DELAY_MS,
  events,
  placement,
});
if (db) {
  const ledgerSide = setupReservationController(mgr, {
    db,
    cluster: env.CLUSTER ?? UNREGISTERED_CLUSTER,
    placementPolicy: placementPolicy(env.PLACEMENT_POLICY),
    tenants: { prefix: env.TENANT_NAMESPACE_PREFIX, instance: env.INSTANCE, maxReplicas: env.MAX_REPLICAS, network: tenantNetwork },
    tenantSyncMs: env.TENANT_SYNC_MS,
    holder: identity,
    apiServerNow: () => serverClock.now(),
    config: {
      readyDeadlineMs: env.READY_DEADLINE_MS,
      releaseBlockedAfterMs: env.RELEASE_BLOCKED_AFTER_MS,
      allowedRegistries,
      outboxBackoff: { baseMs: env.OUTBOX_BACKOFF_BASE_MS, capMs: Math.max(env.OUTBOX_BACKOFF_BASE_MS, env.OUTBOX_BACKOFF_CAP_MS) },
    },
    fastPaths: env.LEDGER_FAST_PATHS === 'true',
    workers: env.LEDGER_WORKERS,
    resyncMs: env.LEDGER_RESYNC_MS,
    resyncPageSize: env.LEDGER_RESYNC_PAGE,
    client: ledgerClient,
    retryMaxMs: env.LEDGER_RETRY_MAX_MS,
    events,
    poll: { leaseMs: env.OUTBOX_LEASE_MS },
    autoscale: { tickMs: env.AUTOSCALE_TICK_MS, scrapeTimeoutMs: env.AUTOSCALE_SCRAPE_TIMEOUT_MS, scrapeConcurrency: env.AUTOSCALE_SCRAPE_CONCURRENCY },
  });
  // Every leader supervises the registered clusters: one whose heartbeat ran out is marked lost.
  // and the running admissions of a lost cluster are moved to others (rows moved here wake this poller).
  const supervision = supervisorMetrics(metrics.registry);
  const overseer = supervisorLedger(db, { runner: identity, now: () => new Date(), placer: ledgerSide.placer });
  const ownCluster = env.CLUSTER ?? UNREGISTERED_CLUSTER;
  const supervise = createSupervisor({ ledger: overseer, metrics: supervision, log, ownCluster, onMoved: (to) => void (to === ownCluster && ledgerSide.poller.wake()) });
  mgr.addController(new PeriodicLoop(SUPERVISE_MS, async (signal) => void (await supervise(signal)), log, 'cluster supervisor'));
  if (env.CLUSTER) {
    mgr.addController(
      new ClusterMember({
        cluster: env.CLUSTER,
        ledger: clusterLedger(db, { cluster: env.CLUSTER, holder: identity, now: () => new Date() }),
        log,
        metrics: clusterMetrics(metrics.registry),
        retryMs: env.LEASE_RETRY_PERIOD_MS,
        // Renewed every retry period: two of them missed means the API server is out of reach.
        lease: { ageMs: () => mgr.leaseAgeMs(), failing: () => mgr.leaseRenewFailing(), freshMs: 2 * env.LEASE_RETRY_PERIOD_MS, deadlineMs: env.LEASE_RENEW_DEADLINE_MS },
        onSuperseded: (reason) => {
          log.error('exiting: cluster epoch superseded', { reason });
          process.exit(1);
        },
      }),
    );
  }
  if (allowsAnyRegistry(allowedRegistries)) log.warn('ALLOWED_IMAGE_REGISTRIES is *: images from ANY registry are delivered');
} else {
  log.warn('LEDGER=off: outbox delivery and the quota ledger are OFF (ModelService reconciling only)');
}

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info('shutting down', { signal });
  const force = setTimeout(() => process.exit(1), 20_000);
  force.unref();
  await mgr.stop();
  await events.flush();
  log.info('stopped');
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

// What tenant pods get (the GPU part only on pods that request GPUs); {} = the cluster's default scheduling.
log.info('pod placement', { placement: prune(placement) });
log.info('tenant namespaces', { prefix: env.TENANT_NAMESPACE_PREFIX, instance: env.INSTANCE, network: tenantNetwork });
log.info('starting', { namespace: env.NAMESPACE, identity, cluster: env.CLUSTER, workers: env.WORKERS, qps: env.QPS, burst: env.BURST, leaderElection: env.LEADER_ELECT, ledger: env.LEDGER });
await mgr.start();
