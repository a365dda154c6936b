// What the CLI reads from the admission API, parsed leniently: the fields it shows are checked,
// fields a newer server adds (timeline, lastFailure, …) are optional, and unknown ones are kept
// (loose objects), so `-o json|yaml` prints the API's document whole.
// A response that does not fit is an `unexpected response`, never a crash deep in rendering.
import { z } from 'zod';

const ts = z.string();
const nts = ts.nullable();

export const timelineSchema = z.looseObject({
  admittedAt: nts.optional(),
  deliveredAt: nts.optional(),
  scheduledAt: nts.optional(),
  startedAt: nts.optional(),
  readyAt: nts.optional(),
});

export const lastFailureSchema = z.looseObject({
  pod: z.string().nullish(),
  reason: z.string(),
  exitCode: z.number().int().nullish(),
  message: z.string().nullish(),
  at: nts.optional(),
});
export type LastFailure = z.output<typeof lastFailureSchema>;

const pendingChangeView = z.looseObject({
  generation: z.number(),
  fromReplicas: z.number(),
  toReplicas: z.number(),
  phase: z.string(),
  requestedAt: ts.optional(),
});

const waitEstimateView = z.looseObject({
  seconds: z.number().nullable(),
  method: z.string().optional(),
  basis: z.string().optional(),
  reason: z.string().optional(),
});
export type WaitEstimateView = z.output<typeof waitEstimateView>;

/** Its place in the tenant's queue (`onShortQuota: "queue"`); position and estimate only while queued. */
export const queueInfoView = z.looseObject({
  position: z.number().nullable().optional(),
  estimate: waitEstimateView.nullable().optional(),
  queuedAt: ts.optional(),
  expiresAt: nts.optional(),
  bypassed: z.number().optional(),
  leftAt: nts.optional(),
});
export type QueueInfoView = z.output<typeof queueInfoView>;

/** spec.autoscale: the range and the target the tenant set (the other knobs are kept, not shown). */
export const autoscaleSpecView = z.looseObject({ minReplicas: z.number(), maxReplicas: z.number(), targetQueuePerReplica: z.number() });
export type AutoscaleSpecView = z.output<typeof autoscaleSpecView>;

/** What the controller's autoscaler last decided and why (schema/autoscale.ts autoscaleStatusSchema). */
export const autoscaleStatusView = z.looseObject({
  desiredReplicas: z.number().nullable().optional(),
  readyReplicas: z.number().optional(),
  load: z.number().nullable().optional(),
  panic: z.boolean().optional(),
  lastDecision: z
    .looseObject({ at: ts, fromReplicas: z.number(), toReplicas: z.number(), desiredReplicas: z.number().optional(), reason: z.string() })
    .nullable()
    .optional(),
  conditions: z.array(z.looseObject({ type: z.string(), reason: z.string().optional(), message: z.string().optional(), since: ts.optional() })).optional(),
  observedAt: nts.optional(),
});
export type AutoscaleStatusView = z.output<typeof autoscaleStatusView>;

export const admissionView = z.looseObject({
  id: z.string(),
  name: z.string(),
  state: z.string(),
  spec: z.looseObject({
    image: z.string(),
    replicas: z.number(),
    port: z.number().optional(),
    resources: z.record(z.string(), z.string()).optional(),
    autoscale: autoscaleSpecView.nullish(),
  }),
  amounts: z.record(z.string(), z.number()).optional(),
  /** The cluster it is placed on (absent from an older API; null while queued). */
  cluster: z.string().nullish(),
  createdAt: ts,
  stateChangedAt: ts.optional(),
  binding: z.looseObject({ namespace: z.string(), crName: z.string(), everReady: z.boolean().optional(), firstReadyAt: nts }).nullable(),
  endpoint: nts,
  releaseBlockedSince: nts.optional(),
  releaseBlockedPods: z.array(z.string()).nullable().optional(),
  releaseBlockedReason: z.string().nullable().optional(),
  releaseBlockedFinalizers: z.array(z.string()).nullable().optional(),
  lastError: nts.optional(),
  lastErrorCode: nts.optional(),
  deadOutboxRows: z.number().optional(),
  timeline: timelineSchema.nullish(),
  lastFailure: lastFailureSchema.nullish(),
  replicas: z.number().optional(),
  chargedReplicas: z.number().optional(),
  generation: z.number().optional(),
  pendingChange: pendingChangeView.nullish(),
  queue: queueInfoView.nullish(),
  autoscaleStatus: autoscaleStatusView.nullish(),
});
export type AdmissionView = z.output<typeof admissionView>;

export const admissionPage = z.looseObject({ items: z.array(admissionView), nextCursor: z.string().nullable() });
export type AdmissionPage = z.output<typeof admissionPage>;

/** GET /queue: the tenant's queued admissions in the order they will be admitted. */
export const queueView = z.looseObject({
  tenant: z.string(),
  queued: z.number(),
  items: z.array(z.looseObject({ id: z.string(), position: z.number(), amounts: z.record(z.string(), z.number()), estimate: waitEstimateView.nullable() })),
});
export type QueueView = z.output<typeof queueView>;

export const resourceUsage = z.looseObject({
  unit: z.string(),
  hard: z.number(),
  reserved: z.number(),
  active: z.number(),
  releasing: z.number(),
  blocked: z.number(),
  conflict: z.number().optional(),
  available: z.number(),
});
export const quotaView = z.looseObject({ tenant: z.string(), resources: z.record(z.string(), resourceUsage) });
export type QuotaView = z.output<typeof quotaView>;

export const errorEnvelope = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) });

/** What a blocked release waits for, in words: the pods, or the finalizers of a ModelService stuck in deletion. */
export function releaseBlocker(a: AdmissionView): { what: string; list: string[] } {
  if (a.releaseBlockedReason === 'Finalizers') return { what: 'the ModelService leaves deletion; finalizers', list: a.releaseBlockedFinalizers ?? [] };
  return { what: 'these pods are gone', list: a.releaseBlockedPods ?? [] };
}
