// The ledger reconciler's decision, as a PURE function of one reservation's ledger rows and
// what the API server says right now (a live read of the CR under our name and of the pods
// labelled with the admission id). The caller performs the returned action and requeues.
//
// Rules (docs/design.md, "The reservation state machine" and "Crash gaps"):
//  - a CR under our name that is not ours (other admission id, or UID ≠ the bound UID) → conflict;
//    never deleted, never released automatically;
//  - spec.replicas × per-replica resources above the charged amounts (kubectl scale) → revert
//    to the replicas the charge covers; scaling down is allowed (nothing is refunded before release);
//  - a change of replicas not settled (PATCH /requests/:id) → scale.ts: apply it to the CR, and
//    refund a decrease once its surplus pods are gone;
//  - Ready seen once → ever_ready (persisted);
//  - never Ready READY_DEADLINE after the CR's creation (a persisted time) → delete it
//    (preconditions uid + resourceVersion, foreground) and move to releasing;
//  - tenant delete (state deleting) → delete our CR if there is one, then releasing;
//  - CR gone, or being deleted, behind our back → releasing;
//  - releasing → release only when the CR is gone AND no labelled pod exists (Terminating
//    included). Still waiting RELEASE_BLOCKED_AFTER into the release → ReleaseBlocked (surfaced,
//    quota kept): reason PodsStillPresent naming the pods, or — no pod left but our CR stays in
//    deletion (a foreign finalizer, or ours not removed) — reason Finalizers naming them;
//  - released/conflict are terminal; a CR of ours that appears after release (a late write of a
//    deposed leader) is deleted, which changes no quota.

import type { ReservationState } from '../../schema/admission.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { chargedReplicas, withinCharge, type ScaledSpec } from './charge.ts';
import { decideScale, type ObservedDeployment, type ScaleAction, type ScaleProgress } from './scale.ts';

export interface ReservationRow {
  id: string;
  tenant: string;
  state: ReservationState;
  /** When the reservation entered its current state. */
  stateChangedAt: Date;
  releaseBlockedSince: Date | null;
  /** What the admission charged (totals). */
  amounts: Amounts;
  binding: { uid: string | null; everReady: boolean } | null;
  /** The change generations (PATCH of replicas). */
  change: ScaleProgress;
}

/** The CR found under the reservation's deterministic name (live read), if any. */
export interface ObservedCR {
  uid: string;
  resourceVersion: string;
  creationTimestamp: Date;
  deleting: boolean;
  /** metadata.finalizers (what keeps a CR in deletion). */
  finalizers: string[];
  admissionId: string | undefined;
  tenant: string | undefined;
  ready: boolean;
  /** spec.replicas and the per-replica resources; null when a quantity cannot be parsed. */
  scale: ScaledSpec | null;
  /** spec.autoscale as canonical JSON (null: none). */
  autoscale: string | null;
}

export interface ObservedPod {
  name: string;
  terminating: boolean;
}

export interface LedgerConfig {
  readyDeadlineMs: number;
  releaseBlockedAfterMs: number;
}

/** What keeps a release waiting: pods that still exist, or (no pod left) the CR's finalizers. */
export type ReleaseBlocker =
  | { reason: 'PodsStillPresent'; pods: string[]; finalizers: [] }
  | { reason: 'Finalizers'; pods: []; finalizers: string[] };

export type DeleteReason = 'tenant-delete' | 'never-ready' | 'orphan';

export type LedgerAction =
  | { type: 'none'; requeueAfterMs?: number }
  | { type: 'conflict'; reason: string }
  | { type: 'markReady' }
  | { type: 'revertScale'; resourceVersion: string; from: number; to: number }
  | { type: 'deleteCR'; uid: string; resourceVersion: string; reason: DeleteReason; thenState: 'releasing' | null }
  | { type: 'toReleasing'; reason: string }
  | { type: 'waitForRelease'; blocker: ReleaseBlocker; blockedSince: Date | null; requeueAfterMs: number }
  | { type: 'release' }
  | ScaleAction;

const POLL_MS = 2_000;

/**
 * `now` is the controller's clock, compared with the ledger's times (which the controller wrote);
 * `apiServerNow` is the API server's (runtime/server-clock.ts), compared with the times it
 * stamped: the never-Ready deadline runs from the CR's creationTimestamp.
 * `deployment`: a live read of the CR's Deployment, made only while a decrease awaits its refund
 * (undefined: not read — the refund is then not decided).
 */
export function decide(
  row: ReservationRow,
  cr: ObservedCR | null,
  pods: ObservedPod[],
  now: Date,
  cfg: LedgerConfig,
  deployment?: ObservedDeployment | null,
  apiServerNow: Date = now,
): LedgerAction {
  // Ours = our admission id and our tenant (the deliverer's adoption rule, outbox/model-service-object.ts).
  const ours = cr !== null && cr.admissionId === row.id && cr.tenant === row.tenant;
  const boundUid = row.binding?.uid ?? null;

  switch (row.state) {
    case 'conflict':
      return { type: 'none' };

    case 'released':
      // A CR of ours after release can only come from a late write of a deposed leader.
      if (cr && ours && !cr.deleting) {
        return { type: 'deleteCR', uid: cr.uid, resourceVersion: cr.resourceVersion, reason: 'orphan', thenState: null };
      }
      return { type: 'none' };

    case 'admitted':
      // Delivery is the outbox deliverer's job; it adopts or flags a CR it finds.
      return { type: 'none' };

    case 'queued':
    case 'cancelled':
    case 'expired':
      // Never delivered: no outbox row of theirs exists, so nothing of theirs can be in a cluster.
      return { type: 'none' };

    case 'delivered':
    case 'ready': {
      if (!cr) return { type: 'toReleasing', reason: 'ModelService deleted outside ModelDock' };
      const conflict = identityConflict(row, cr, boundUid);
      if (conflict) return { type: 'conflict', reason: conflict };
      // Deleted behind our back: take the release path, where a deletion that stalls is surfaced.
      if (cr.deleting) return { type: 'toReleasing', reason: 'ModelService being deleted outside ModelDock' };
      if (cr.scale && !withinCharge(cr.scale, row.amounts)) {
        return { type: 'revertScale', resourceVersion: cr.resourceVersion, from: cr.scale.replicas, to: chargedReplicas(cr.scale, row.amounts) };
      }
      const scale = decideScale(row.change, { resourceVersion: cr.resourceVersion, replicas: cr.scale?.replicas ?? null, autoscale: cr.autoscale }, deployment === undefined ? undefined : { deployment, pods });
      if (scale) return scale;
      if (cr.ready && !row.binding?.everReady) return { type: 'markReady' };
      const age = apiServerNow.getTime() - cr.creationTimestamp.getTime();
      if (!row.binding?.everReady && age >= cfg.readyDeadlineMs) {
        return { type: 'deleteCR', uid: cr.uid, resourceVersion: cr.resourceVersion, reason: 'never-ready', thenState: 'releasing' };
      }
      if (!row.binding?.everReady) {
        const left = cfg.readyDeadlineMs - age;
        return { type: 'none', requeueAfterMs: Math.max(1_000, left) };
      }
      return { type: 'none' };
    }

    case 'deleting': {
      if (!cr) return { type: 'toReleasing', reason: 'no ModelService under our name' };
      if (!ours || (boundUid !== null && cr.uid !== boundUid)) {
        // A tenant delete must never remove someone else's object.
        return { type: 'conflict', reason: identityConflict(row, cr, boundUid) ?? 'ModelService under our name is not ours' };
      }
      if (cr.deleting) return { type: 'toReleasing', reason: 'ModelService already being deleted' };
      return { type: 'deleteCR', uid: cr.uid, resourceVersion: cr.resourceVersion, reason: 'tenant-delete', thenState: 'releasing' };
    }

    case 'releasing': {
      if (cr && ours && boundUid !== null && cr.uid !== boundUid) {
        return { type: 'conflict', reason: identityConflict(row, cr, boundUid) ?? 'UID changed' };
      }
      const blocking = pods.map((p) => p.name).sort();
      if (cr && ours && !cr.deleting) {
        // Our CR is still there and not being deleted (e.g. the delete was lost): delete it again.
        return { type: 'deleteCR', uid: cr.uid, resourceVersion: cr.resourceVersion, reason: 'tenant-delete', thenState: null };
      }
      if ((cr && ours) || blocking.length > 0) {
        const blocker: ReleaseBlocker =
          blocking.length > 0
            ? { reason: 'PodsStillPresent', pods: blocking, finalizers: [] }
            : { reason: 'Finalizers', pods: [], finalizers: [...(cr?.finalizers ?? [])].sort() };
        const waited = now.getTime() - row.stateChangedAt.getTime();
        const blockedSince = row.releaseBlockedSince ?? (waited >= cfg.releaseBlockedAfterMs ? now : null);
        return { type: 'waitForRelease', blocker, blockedSince, requeueAfterMs: POLL_MS };
      }
      return { type: 'release' };
    }
  }
}

function identityConflict(row: ReservationRow, cr: ObservedCR, boundUid: string | null): string | undefined {
  if (cr.admissionId !== row.id || cr.tenant !== row.tenant) {
    return `ModelService under our name carries admission id ${cr.admissionId ?? '(none)'} of tenant ${cr.tenant ?? '(none)'}`;
  }
  if (boundUid !== null && cr.uid !== boundUid) return `ModelService UID ${cr.uid} differs from the bound UID ${boundUid}`;
  return undefined;
}
