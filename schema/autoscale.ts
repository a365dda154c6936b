// Autoscaling an admission on its pods' load (queue depth + busy slots, from each pod's /metrics):
// the spec a tenant sets (POST /requests `autoscale`, PATCH `autoscale`), and what the tenant API
// shows of the controller's work. Pure. The algorithm is controller/autoscale/decide.ts; every
// scale-up it decides is charged in the ledger BEFORE the Deployment changes (ledger/change.ts).
import { z } from 'zod';
import { canonicalJson } from './canonical-json.ts';

/** The autoscaling spec's defaults (documented in docs/admission-api.md). */
export const AUTOSCALE_DEFAULTS = {
  stableWindowSeconds: 60,
  panicWindowPercent: 10,
  panicThreshold: 2,
  tolerance: 0.1,
  scaleDownStabilizationSeconds: 300,
  maxChangesPerMinute: 4,
} as const;

/** The autoscaling spec. `maxReplicas` is bounded like `replicas`: by the deployment's MAX_REPLICAS at admission, by the CRD's own bound in the ModelService. */
export function autoscaleSpecSchema(maxReplicas: number) {
  const replicas = z.number().int().min(1).max(maxReplicas);
  return z
    .strictObject({
      minReplicas: replicas.describe(`Fewest pods (1..${maxReplicas}); the autoscaler never goes below it.`),
      maxReplicas: replicas.describe(`Most pods (1..${maxReplicas}); a scale-up is also bounded by the tenant's quota (QuotaLimited).`),
      targetQueuePerReplica: z
        .number()
        .positive()
        .max(10_000)
        .describe('Load one replica should carry: requests waiting plus requests being generated, per ready pod.'),
      stableWindowSeconds: z
        .number()
        .int()
        .min(6)
        .max(3600)
        .default(AUTOSCALE_DEFAULTS.stableWindowSeconds)
        .describe('The load is averaged over this window to decide (Knative stable window, default 60 s).'),
      panicWindowPercent: z
        .number()
        .min(1)
        .max(100)
        .default(AUTOSCALE_DEFAULTS.panicWindowPercent)
        .describe('The panic window, as a percentage of the stable window (default 10 %).'),
      panicThreshold: z
        .number()
        .min(1.1)
        .max(100)
        .default(AUTOSCALE_DEFAULTS.panicThreshold)
        .describe('Panic mode begins when the panic window asks for this many times the ready pods (default 2); while panicking the autoscaler never scales down.'),
      tolerance: z
        .number()
        .min(0)
        .max(0.9)
        .default(AUTOSCALE_DEFAULTS.tolerance)
        .describe('No change while load / (target × replicas) stays within 1 ± tolerance (HPA tolerance, default 0.1).'),
      scaleDownStabilizationSeconds: z
        .number()
        .int()
        .min(0)
        .max(3600)
        .default(AUTOSCALE_DEFAULTS.scaleDownStabilizationSeconds)
        .describe('A scale-down goes only to the highest recommendation of this window (HPA scale-down stabilization, default 300 s).'),
      maxChangesPerMinute: z
        .number()
        .int()
        .min(1)
        .max(60)
        .default(AUTOSCALE_DEFAULTS.maxChangesPerMinute)
        .describe('At most this many ledger changes (charged scale-ups, scale-downs) per minute for this admission (default 4).'),
      metricsFallback: z
        .strictObject({
          replicas: replicas.describe('Replicas to go to (charged like any scale-up) once metrics stayed unreadable for afterSeconds.'),
          afterSeconds: z.number().int().min(10).max(3600),
        })
        .nullable()
        .default(null)
        .describe('When the pods\' metrics cannot be read: null (the default) holds the replicas where they are; either way the MetricsUnavailable condition shows it.'),
    })
    .refine((s) => s.minReplicas <= s.maxReplicas, { path: ['maxReplicas'], message: 'must be at least minReplicas' })
    .refine((s) => s.metricsFallback === null || (s.metricsFallback.replicas >= s.minReplicas && s.metricsFallback.replicas <= s.maxReplicas), {
      path: ['metricsFallback', 'replicas'],
      message: 'must be within minReplicas..maxReplicas',
    })
    .describe('Scale the replicas on the pods\' load. Every scale-up is charged against the quota before the pods are created; a scale-down is refunded once the surplus pods are gone.');
}
export type AutoscaleSpec = z.output<ReturnType<typeof autoscaleSpecSchema>>;

export const AUTOSCALE_CONDITION_TYPES = ['QuotaLimited', 'MetricsUnavailable', 'Panic'] as const;
export type AutoscaleConditionType = (typeof AUTOSCALE_CONDITION_TYPES)[number];

export const autoscaleConditionSchema = z.object({
  type: z.enum(AUTOSCALE_CONDITION_TYPES),
  reason: z.string(),
  message: z.string(),
  since: z.string().describe('When the condition began (it is listed only while true).'),
});
export type AutoscaleCondition = z.output<typeof autoscaleConditionSchema>;

export const autoscaleDecisionSchema = z.object({
  at: z.string(),
  fromReplicas: z.number().int().min(0),
  toReplicas: z.number().int().min(0),
  desiredReplicas: z.number().int().min(0).describe('What the load asked for; toReplicas is less when the quota allowed less.'),
  reason: z.string(),
});
export type AutoscaleDecision = z.output<typeof autoscaleDecisionSchema>;

/** What the controller's autoscaler writes for the tenant to see (reservation.autoscale_status). */
export const autoscaleStatusSchema = z.object({
  desiredReplicas: z.number().int().min(0).nullable().describe('What the load asks for now (null: no reading yet).'),
  readyReplicas: z.number().int().min(0).describe('Pods Ready and not terminating when the autoscaler last looked: the replicas that carry the load.'),
  load: z.number().min(0).nullable().describe('The averaged load (queue + busy) the last decision saw.'),
  panic: z.boolean(),
  lastDecision: autoscaleDecisionSchema.nullable().describe('The last change the autoscaler committed to the ledger.'),
  conditions: z.array(autoscaleConditionSchema),
  observedAt: z.string().nullable(),
});
export type AutoscaleStatus = z.output<typeof autoscaleStatusSchema>;

/** Replicas clamped into the spec's range. */
export const clampReplicas = (spec: Pick<AutoscaleSpec, 'minReplicas' | 'maxReplicas'>, n: number): number => Math.min(spec.maxReplicas, Math.max(spec.minReplicas, n));

/**
 * An autoscale spec as the ledger and the ModelService compare it: canonical JSON without the
 * fields set to null (a JSON merge patch of `metricsFallback: null` removes the key on the CR, so
 * "null" and "absent" are the same spec); null when there is none.
 */
export function autoscaleIdentity(spec: unknown): string | null {
  if (spec === null || spec === undefined || typeof spec !== 'object') return null;
  return canonicalJson(Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== null && v !== undefined)));
}

/** The spec's fields that may be null: absent from its identity, sent as null in a merge patch. */
const NULLABLE_FIELDS = ['metricsFallback'] as const;

/** The body of spec.autoscale in a JSON merge patch that makes the CR's equal `identity` (a null field removes the CR's). */
export function autoscalePatch(identity: string | null): Record<string, unknown> | null {
  if (identity === null) return null;
  return { ...Object.fromEntries(NULLABLE_FIELDS.map((f) => [f, null])), ...(JSON.parse(identity) as Record<string, unknown>) };
}
