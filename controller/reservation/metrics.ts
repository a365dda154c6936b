// ModelDock's domain metrics for the outbox and the ledger, in the Manager's registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface LedgerMetrics {
  delivered: Counter<'outcome'>;
  released: Counter;
  conflicts: Counter;
  releaseBlocked: Counter<'reason'>;
  deadRows: Counter<'kind'>;
  ackGroups: Histogram;
  ownCreateEvents: Counter;
  scaleReverted: Counter;
  leftoversDeleted: Counter;
  strandedFreed: Counter;
  refunded: Counter;
  liveReads: Counter<'kind'>;
  resyncPages: Counter;
  queueAdmitted: Counter<'bypass'>;
  queueExpired: Counter;
  queueWait: Histogram;
  queueLength: Gauge<'tenant'>;
}

export function ledgerMetrics(registry: Registry): LedgerMetrics {
  const registers = [registry];
  return {
    delivered: new Counter({ name: 'modeldock_outbox_delivered_total', help: 'ModelServices delivered, by outcome (created | adopted).', labelNames: ['outcome'], registers }),
    released: new Counter({ name: 'modeldock_ledger_releases_total', help: 'Reservations whose quota was released.', registers }),
    conflicts: new Counter({ name: 'modeldock_ledger_conflicts_total', help: 'Reservations moved to conflict (never released automatically).', registers }),
    releaseBlocked: new Counter({
      name: 'modeldock_release_blocked_total',
      help: 'Releases found blocked (counted again when the reason changes), by reason: PodsStillPresent (pods still exist) | Finalizers (no pod left, the ModelService stays in deletion).',
      labelNames: ['reason'],
      registers,
    }),
    scaleReverted: new Counter({ name: 'modeldock_ledger_scale_reverted_total', help: 'ModelServices scaled above their charge and reverted to the charged replicas.', registers }),
    leftoversDeleted: new Counter({
      name: 'modeldock_cluster_leftovers_deleted_total',
      help: 'ModelServices of admissions moved to another cluster (a failover) deleted from this one; no ledger write.',
      registers,
    }),
    strandedFreed: new Counter({
      name: 'modeldock_cluster_stranded_freed_total',
      help: "Placements left by a failover whose stranded room this cluster freed once nothing of the admission was left on it.",
      registers,
    }),
    refunded: new Counter({ name: 'modeldock_ledger_scale_down_refunds_total', help: 'Decreases of replicas refunded once their surplus pods were gone.', registers }),
    liveReads: new Counter({
      name: 'modeldock_ledger_live_reads_total',
      help: 'Live API reads of the ledger reconciler, by kind (modelservice GET | pods LIST | deployment GET); delivered/ready reservations are read from the cache.',
      labelNames: ['kind'],
      registers,
    }),
    resyncPages: new Counter({ name: 'modeldock_ledger_resync_pages_total', help: 'Pages of open reservations read by the periodic ledger resync.', registers }),
    queueAdmitted: new Counter({
      name: 'modeldock_queue_admitted_total',
      help: 'Queued admissions this controller let in, by bypass (yes: it passed its tenant\'s head that did not fit the quota; across: it passed another tenant\'s admission that did not fit the cluster room).',
      labelNames: ['bypass'],
      registers,
    }),
    queueExpired: new Counter({ name: 'modeldock_queue_expired_total', help: 'Queued admissions this controller expired (queueTtlSeconds ran out; never charged).', registers }),
    queueWait: new Histogram({
      name: 'modeldock_queue_wait_seconds',
      help: 'How long the admissions this controller let in from the queue had waited.',
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    }),
    queueLength: new Gauge({ name: 'modeldock_queue_length', help: 'Admissions a tenant has queued, as of this controller\'s last queue sweep (every QUEUE_SWEEP_MS) or dequeue for it.', labelNames: ['tenant'], registers }),
    deadRows: new Counter({ name: 'modeldock_outbox_dead_total', help: 'Outbox rows that exhausted their attempts.', labelNames: ['kind'], registers }),
    ackGroups: new Histogram({
      name: 'modeldock_outbox_ack_group_size',
      help: 'Deliveries acknowledged together in one transaction (groups of two or more; one alone is not counted).',
      buckets: [2, 4, 8, 16, 32, 50],
      registers,
    }),
    ownCreateEvents: new Counter({
      name: 'modeldock_ledger_own_create_events_skipped_total',
      help: 'Informer add events of ModelServices this controller had just created, unchanged since: not requeued (no news).',
      registers,
    }),
  };
}
