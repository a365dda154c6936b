// The row contracts of the shared tables: which tables form the ledger, and the values their
// enumerated columns may hold. Both sides read rows through these, so an unknown value is an
// error at the edge rather than a silent cast. (The reservation states themselves are part of
// the public API and live in schema/admission.ts.)
import { RELEASE_BLOCKED_REASONS, RESERVATION_STATES, type ReleaseBlockedReason, type ReservationState } from '../schema/admission.ts';
import { str } from './columns.ts';

/** Every table of the ledger (schema_migrations aside), in dependency order. */
export const LEDGER_TABLES = ['tenant_quota', 'reservation', 'binding', 'outbox', 'quota_movement', 'reservation_change', 'tenant_fence', 'controller_epoch', 'scheduled_run', 'cluster', 'cluster_audit', 'allotment_move', 'cluster_allotment', 'allotment_log', 'tenant_affinity', 'placement'] as const;

/** `quota_movement.direction`: at most one row of each per (reservation, generation) (primary
 *  key). `charge` at generation 1 is the admission, at a later one a scale-up's delta; `refund` is a
 *  scale-down's delta; the `resolve-*` rows audit an operator's decision on a conflict; `move` records a
 *  failover moving the charge to another cluster (no balance change; keyed by the placement it moved to). */
export type MovementDirection = 'charge' | 'refund' | 'release' | 'resolve-release' | 'resolve-keep' | 'move';

/** `reservation.release_blocked_reason`, checked. */
export function releaseBlockedReasonOrNull(v: unknown): ReleaseBlockedReason | null {
  if (v === null || v === undefined) return null;
  const s = str(v);
  if (!(RELEASE_BLOCKED_REASONS as readonly string[]).includes(s)) throw new Error(`unknown release_blocked_reason ${s}`);
  return s as ReleaseBlockedReason;
}

/** `reservation.state`, checked. */
export function reservationState(v: unknown): ReservationState {
  const s = str(v);
  if (!(RESERVATION_STATES as readonly string[]).includes(s)) throw new Error(`unknown reservation state ${s}`);
  return s as ReservationState;
}
