// Changing the replicas (or the autoscaling) of an admission (PATCH /requests/:id): the request, the
// amounts a change moves, and how a change in flight reads in the tenant API. Pure.
//
// Every accepted change is a new generation of its admission (1 = the admission itself). An
// increase is charged its delta when it is accepted (all or nothing); a decrease keeps its
// charge until the controller has seen the surplus pods gone, then refunds the delta. A change is
// pending until then: `applying` until the ModelService carries the new replicas, then — a
// decrease only — `awaitingScaleDown` until the refund.
import { z } from 'zod';
import { REPLICA_RESOURCES, totalAmounts, workloadShape, type Amounts, type ReplicaResource } from './model-service.ts';
import { DEFAULT_MAX_REPLICAS } from './admission.ts';
import { autoscaleSpecSchema } from './autoscale.ts';

/** The body of PATCH /requests/:id. Strict: only `replicas` and `autoscale` can change. */
export function scaleRequestSchema(maxReplicas: number = DEFAULT_MAX_REPLICAS) {
  return z
    .strictObject({
      replicas: workloadShape.replicas
        .max(maxReplicas)
        .optional()
        .describe(`The new desired number of pods (0..${maxReplicas}). Refused (409 autoscaled) while the admission autoscales: change autoscale instead.`),
      autoscale: autoscaleSpecSchema(maxReplicas)
        .nullable()
        .optional()
        .describe('The new autoscaling spec (replaces the whole spec), or null to stop autoscaling (the replicas stay where they are). Replicas outside the new range move into it with this change.'),
    })
    .refine((b) => b.replicas !== undefined || b.autoscale !== undefined, { message: 'give replicas, autoscale, or both' })
    .refine((b) => b.replicas === undefined || !b.autoscale || (b.replicas >= b.autoscale.minReplicas && b.replicas <= b.autoscale.maxReplicas), {
      path: ['replicas'],
      message: 'with autoscale, replicas must be within minReplicas..maxReplicas',
    })
    .describe('A change of the replicas of an admission, or of how it autoscales.');
}
export type ScaleRequest = z.output<ReturnType<typeof scaleRequestSchema>>;

const PENDING_PHASES = ['applying', 'awaitingScaleDown'] as const;

export const pendingChangeSchema = z
  .object({
    generation: z.number().int().min(2).describe('The change generation (the admission itself is generation 1).'),
    fromReplicas: z.number().int().min(0),
    toReplicas: z.number().int().min(0),
    phase: z
      .enum(PENDING_PHASES)
      .describe('applying: the ModelService does not carry the new replicas yet; awaitingScaleDown: a decrease waits for its surplus pods to be gone before the delta is refunded.'),
    requestedAt: z.string(),
  })
  .describe('A change of replicas in flight.');
export type PendingChange = z.output<typeof pendingChangeSchema>;

/**
 * The amounts `|to − from|` replicas of this per-replica shape charge: what an increase charges
 * and a decrease refunds. The `modelservices` count does not change with replicas (0 here).
 */
export function scaleDelta(spec: { resources: Partial<Record<ReplicaResource, string>> }, from: number, to: number): Amounts {
  const one = totalAmounts({ replicas: Math.abs(to - from), resources: spec.resources });
  const out = { modelservices: 0 } as Amounts;
  for (const r of REPLICA_RESOURCES) out[r] = one[r];
  return out;
}

/** The ledger's view of an admission's latest change (reservation generations + its change row). */
export interface ChangeProgress {
  generation: number;
  appliedGeneration: number;
  settledGeneration: number;
  /** The latest change's row (null for generation 1: no change was ever made). */
  latest: { fromReplicas: number; toReplicas: number; requestedAt: string } | null;
}

/** Pending iff the latest generation is not settled yet, and the admission still runs (a delete supersedes it). */
export function pendingChangeOf(c: ChangeProgress, active: boolean): PendingChange | null {
  if (!active || c.settledGeneration >= c.generation || !c.latest) return null;
  return {
    generation: c.generation,
    fromReplicas: c.latest.fromReplicas,
    toReplicas: c.latest.toReplicas,
    phase: c.appliedGeneration >= c.generation ? 'awaitingScaleDown' : 'applying',
    requestedAt: c.latest.requestedAt,
  };
}

/**
 * The replicas the quota covers now: the desired ones, or — while a change is unsettled — the
 * larger side of it (an increase is charged at once; a decrease is refunded only at the end,
 * and a delete that overtook it releases the larger side with everything else).
 */
export function chargedReplicasOf(replicas: number, c: ChangeProgress): number {
  if (c.settledGeneration >= c.generation || !c.latest) return replicas;
  return Math.max(c.latest.fromReplicas, c.latest.toReplicas);
}
