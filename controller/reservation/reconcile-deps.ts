// What the ledger reconciler is given (ReservationDeps, wired by setup.ts), and the same narrowed to
// one reconcile (ReconcileScope): its database and cluster calls carry that reconcile's signal.
import type { Db } from '../../ledger/db.ts';
import type { ModelService } from '../../schema/model-service.ts';
import type { RegistryRule } from '../../schema/policy.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Logger } from '../runtime/log.ts';
import type { ReservationCluster } from './cluster.ts';
import type { LedgerConfig } from './decide.ts';
import type { ReservationKey } from './key.ts';
import type { LeaderFence } from './leader-fence.ts';
import type { LedgerMetrics } from './metrics.ts';
import type { Backoff, ClaimedRow } from './outbox-store.ts';
import type { ReservationRecord } from './record.ts';
import type { DeliveryAck } from './transitions.ts';
import type { Placer } from '../../ledger/placement.ts';

export interface ReservationDeps {
  db: Db;
  /** The cluster as seen by one reconcile: its calls are aborted with `signal`. */
  cluster: (signal: AbortSignal) => ReservationCluster;
  /** The informer cache's ModelService under a name: null when absent, undefined while not synced. */
  cachedModelService?: (ns: string, name: string) => ModelService | null | undefined;
  /** The tenant's namespace (controller/tenant/space.ts): where its ModelServices are created and, before it is bound, looked for. */
  namespaceFor: (tenant: string) => string;
  /** INSTANCE: the installation label new ModelServices carry (runtime/cache.ts), when set. */
  instance?: string;
  /** This leader's fence (leader-fence.ts): the epoch, raised on the tenant's fence row before the first read of it. */
  fence: LeaderFence;
  /** Placement (ledger/placement.ts): where a dequeued admission goes, and the tenant's anchor a release gives room back on. */
  placer: Placer;
  now: () => Date;
  /** The API server's time (runtime/server-clock.ts): what the times it stamps are compared with. Default: now(). */
  apiServerNow?: () => Date;
  /** `allowedRegistries`: the controller's own copy of the image policy, re-checked at delivery (`ANY_REGISTRY` = any; no rules = nothing). */
  config: LedgerConfig & { outboxBackoff: Backoff; allowedRegistries: readonly RegistryRule[] };
  /** Outbox rows claimed for a reservation, handed over by the poller. */
  takeClaims: (reservationId: string) => ClaimedRow[];
  /** Hands claimed rows back to the poller unfailed (their failure could not be recorded). */
  keepClaims: (rows: ClaimedRow[]) => void;
  /** The record the poller read with the claim (prefetch.ts), once and while fresh. */
  prefetched?: (key: ReservationKey) => ReservationRecord | undefined;
  /** A delivery's acknowledgement (ack-group.ts: group-committed per claim); default: its own transaction (transitions.ts ackCreate). */
  ackDelivery?: (ack: DeliveryAck) => Promise<void>;
  /** Told of every ModelService this process created (own-creations.ts: its informer add event is not requeued). */
  created?: (obj: ModelService) => void;
  metrics: LedgerMetrics;
  events?: EventRecorder;
  log: Logger;
}

/** The deps of one reconcile: every database and API call carries its signal. */
export type ReconcileScope = Omit<ReservationDeps, 'cluster'> & { cluster: ReservationCluster };
