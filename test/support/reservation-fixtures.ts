// Fixtures of one reservation as the ledger reconciler meets it: its row as the record SELECT
// returns it (controller/reservation/record.ts), the ModelService under its name, its claimed outbox
// rows, and the clock, epoch and names they share.
import type { Row } from '../../ledger/db.ts';
import { AMOUNT_COLUMNS, RESOURCE_NAMES } from '../../ledger/resources.ts';
import type { ReleaseBlockedReason, ReservationState } from '../../schema/admission.ts';
import { API_VERSION, KIND, LABELS, type Amounts, type ModelService, type ModelServiceSpec } from '../../schema/model-service.ts';
import type { ReservationKey } from '../../controller/reservation/key.ts';
import type { ClaimedRow } from '../../controller/reservation/outbox-store.ts';

export const NOW = new Date('2026-03-01T12:00:00.000Z');
export const ago = (ms: number): Date => new Date(NOW.getTime() - ms);
export const EPOCH = 7;
export const NAMESPACE = 'tenants';
export const KEY: ReservationKey = { tenant: 'acme', id: '01HRESERVATION' };
export const CR_NAME = 'md-01hreservation';
/** The UID of the CR bound to the reservation (reservationRow's default binding). */
export const BOUND_UID = 'uid-bound';
/** A valid stored spec: 2 replicas of 500m / 512Mi. */
export const SPEC: ModelServiceSpec = { image: 'ghcr.io/acme/llm:1.0', replicas: 2, port: 8000, resources: { cpu: '500m', memory: '512Mi' }, env: [], args: [], readinessPath: '/healthz' };
/** What SPEC charges. */
export const CHARGED: Amounts = { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0, modelservices: 1 };

const sqlTime = (d: Date): string => d.toISOString().replace('T', ' ').replace('Z', '');

export interface ReservationFixture {
  state: ReservationState;
  tenant?: string;
  id?: string;
  spec?: unknown;
  amounts?: Amounts;
  stateChangedAt?: Date;
  lastReconciledAt?: Date | null;
  /** The bound CR; null: none bound. Default: CR_NAME in NAMESPACE with BOUND_UID, never Ready. */
  binding?: { uid?: string | null; everReady?: boolean } | null;
  /** Change generations (default 1/1/1) and the replicas before the latest change. */
  change?: { generation: number; applied: number; settled: number; fromReplicas: number | null };
  releaseBlocked?: { since: Date; reason: ReleaseBlockedReason; pods: string[]; finalizers: string[] };
  /** reservation.cluster (default: `default`, the reconcile harness's own cluster). */
  cluster?: string;
}

/** The reservation as the record SELECT returns it (controller/reservation/record.ts): DATETIME(3) as text, JSON as text. */
export function reservationRow(f: ReservationFixture): Row {
  const amounts = f.amounts ?? CHARGED;
  const binding = f.binding === undefined ? {} : f.binding;
  const change = f.change ?? { generation: 1, applied: 1, settled: 1, fromReplicas: null };
  const row: Row = {
    id: f.id ?? KEY.id,
    tenant: f.tenant ?? KEY.tenant,
    state: f.state,
    state_changed_at: sqlTime(f.stateChangedAt ?? NOW),
    release_blocked_since: f.releaseBlocked ? sqlTime(f.releaseBlocked.since) : null,
    created_at: sqlTime(new Date(NOW.getTime() - 3_600_000)),
    request_id: 'req-1',
    spec: JSON.stringify(f.spec ?? SPEC),
    last_reconciled_at: f.lastReconciledAt === undefined || f.lastReconciledAt === null ? null : sqlTime(f.lastReconciledAt),
    cluster: f.cluster ?? 'default',
    room_anchor: null,
    release_blocked_reason: f.releaseBlocked?.reason ?? null,
    release_blocked_pods: f.releaseBlocked ? JSON.stringify(f.releaseBlocked.pods) : null,
    release_blocked_finalizers: f.releaseBlocked ? JSON.stringify(f.releaseBlocked.finalizers) : null,
    generation: change.generation,
    applied_generation: change.applied,
    settled_generation: change.settled,
    from_replicas: change.fromReplicas,
    bound: binding ? (f.id ?? KEY.id) : null,
    namespace: binding ? NAMESPACE : null,
    cr_name: binding ? CR_NAME : null,
    uid: binding ? (binding.uid === undefined ? BOUND_UID : binding.uid) : null,
    ever_ready: binding?.everReady ? 1 : 0,
    first_ready_at: null,
    scheduled_at: null,
    started_at: null,
    last_failure: null,
  };
  for (const r of RESOURCE_NAMES) row[AMOUNT_COLUMNS[r]] = amounts[r];
  return row;
}

export interface CrFixture {
  admissionId?: string;
  tenant?: string;
  uid?: string;
  replicas?: number;
  ready?: boolean;
  deleting?: boolean;
  finalizers?: string[];
  createdAt?: Date;
  /** status.scheduledAt: the first pod bound to a node. */
  scheduledAt?: Date;
}

/** A ModelService as the API server returns it, by default the reservation's own, bound one. */
export function modelService(f: CrFixture = {}): ModelService {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: CR_NAME,
      namespace: NAMESPACE,
      uid: f.uid ?? BOUND_UID,
      resourceVersion: 'rv-1',
      creationTimestamp: (f.createdAt ?? new Date(NOW.getTime() - 60_000)).toISOString(),
      labels: { [LABELS.admissionId]: f.admissionId ?? KEY.id, [LABELS.tenant]: f.tenant ?? KEY.tenant },
      finalizers: f.finalizers ?? [],
      ...(f.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
    },
    spec: { ...SPEC, replicas: f.replicas ?? SPEC.replicas },
    status: {
      conditions: f.ready ? [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: NOW.toISOString() }] : [],
      ...(f.scheduledAt ? { scheduledAt: f.scheduledAt.toISOString() } : {}),
    },
  };
}

/** A claimed outbox row of the reservation. */
export function claimedRow(seq: number, kind: ClaimedRow['kind'], over: Partial<ClaimedRow> = {}): ClaimedRow {
  return { seq, tenant: KEY.tenant, reservationId: KEY.id, kind, attempts: 0, requestId: 'req-1', claim: { cluster: 'default', by: 'ctl/abc', until: new Date(NOW.getTime() + 60_000), epoch: EPOCH }, ...over };
}

