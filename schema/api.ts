// Response shapes of the admission API and its one error envelope. The OpenAPI document
// (GET /openapi.json) is generated from these and from admission.ts.
import { z } from 'zod';
import { failureSchema, modelServiceSpecSchema, RESOURCE_NAMES } from './model-service.ts';
import { admissionId, RELEASE_BLOCKED_REASONS, RESERVATION_STATES } from './admission.ts';
import { timelineSchema } from './timeline-schema.ts';
import { pendingChangeSchema } from './scale.ts';
import { autoscaleStatusSchema } from './autoscale.ts';
import { FAILURE_MESSAGE_MAX_CHARS, FAILURE_REASONS, LAST_ERROR_CODES, LAST_ERROR_MAX_CHARS } from './tenant-errors.ts';

export const amountsSchema = z
  .object({
    cpu: z.number().int().min(0).describe('Millicores.'),
    memory: z.number().int().min(0).describe('MiB.'),
    'nvidia.com/gpu': z.number().int().min(0).describe('Whole GPUs.'),
  })
  .describe('Integer ledger amounts: cpu millicores, memory MiB, GPU count.');

const timestamp = z.string().describe('RFC 3339 UTC timestamp with milliseconds.');

export const bindingSchema = z
  .object({
    namespace: z.string(),
    crName: z.string(),
    uid: z.string().nullable(),
    everReady: z.boolean(),
    firstReadyAt: timestamp.nullable(),
  })
  .describe('The ModelService custom resource actually created for this admission (set by the controller).');

export const waitEstimateSchema = z
  .object({
    seconds: z.number().int().min(0).nullable().describe('Estimated seconds until it is admitted; null when there is nothing to estimate from (see reason).'),
    method: z.literal('release-rate').describe("How it was estimated: the tenant's own quota released per second over the last minutes, against what this admission and those ahead of it still need."),
    basis: z.string().optional().describe('The numbers the estimate came from (with seconds).'),
    reason: z.string().optional().describe('Why there is no estimate (with a null seconds).'),
  })
  .describe('An estimated wait, with how it was estimated.');
export type WaitEstimateShown = z.output<typeof waitEstimateSchema>;

export const queueInfoSchema = z
  .object({
    position: z
      .number()
      .int()
      .min(1)
      .nullable()
      .describe("1 = the next of this tenant's queue to be admitted; it never grows. Given by POST /requests, GET /requests/{id} and GET /queue; null in a list, and once it left the queue."),
    estimate: waitEstimateSchema.nullable().describe('As position: null in a list and once it left the queue.'),
    queuedAt: timestamp,
    expiresAt: timestamp.nullable().describe('When it expires unadmitted (queueTtlSeconds); null: it waits until admitted or cancelled.'),
    bypassed: z.number().int().min(0).describe('How many later admissions of the tenant were admitted past it while it did not fit (bounded: then freed quota is held back for it).'),
    leftAt: timestamp.nullable().describe('When it left the queue: admitted, cancelled or expired; null while queued.'),
    estimatedWaitAtQueueing: z.number().int().min(0).nullable().describe('The estimate given when it was queued, in seconds (kept to compare with the real wait).'),
  })
  .describe('Its place in the queue (onShortQuota "queue"); null for an admission that never waited.');

export const queueViewSchema = z
  .object({
    tenant: z.string(),
    queued: z.number().int().min(0).describe('How many admissions the tenant has queued (items lists the first 100).'),
    items: z.array(
      z.object({
        id: admissionId,
        position: z.number().int().min(1),
        amounts: amountsSchema.describe('What it is charged once admitted.'),
        estimate: waitEstimateSchema,
      }),
    ),
  })
  .describe("The calling tenant's queued admissions in the order they will be admitted (FIFO; a smaller one may pass a head that does not fit, a bounded number of times).");
export type QueueView = z.output<typeof queueViewSchema>;

export const admissionSchema = z
  .object({
    id: admissionId.describe('Admission id (ULID).'),
    tenant: z.string(),
    name: z.string(),
    state: z.enum(RESERVATION_STATES),
    spec: modelServiceSpecSchema,
    amounts: amountsSchema.describe('Total charged against the quota now: per-replica amounts × chargedReplicas (and 1 modelservices).'),
    replicas: z.number().int().min(0).describe('Desired replicas (spec.replicas; PATCH changes it).'),
    chargedReplicas: z
      .number()
      .int()
      .min(0)
      .describe('The replicas the quota covers now: replicas, or while a change is pending the larger side of it (a decrease is refunded only once its surplus pods are gone); 0 once released.'),
    generation: z.number().int().min(1).describe('The change generation: 1 for the admission, +1 per accepted PATCH.'),
    pendingChange: pendingChangeSchema.nullable().describe('A change of replicas still in flight; null when none (or when a delete superseded it).'),
    crName: z.string().describe('Name of the ModelService CR: md-<id lowercased>.'),
    cluster: z
      .string()
      .nullable()
      .describe('The cluster the admission is placed on (docs/multi-cluster.md); "default" while the operator has registered none; null while it waits in the queue or if it never left it.'),
    requestId: z.string().describe('Request id of the admitting request (X-Request-Id).'),
    createdAt: timestamp,
    updatedAt: timestamp,
    stateChangedAt: timestamp,
    binding: bindingSchema.nullable(),
    endpoint: z
      .string()
      .nullable()
      .describe(
        'The URL the tenant calls its model at, once delivered: <API base>/v1/models/<id>, serving POST …/chat/completions and …/completions with the same API key (404 to another tenant; 409 model_not_ready until the admission is ready). null before delivery and once deleting.',
      ),
    releaseBlockedSince: timestamp.nullable().describe('Set while the release is blocked (ReleaseBlocked): pods still terminating, or the ModelService stays in deletion.'),
    releaseBlockedReason: z
      .enum(RELEASE_BLOCKED_REASONS)
      .nullable()
      .describe('Why the release is blocked: PodsStillPresent (see releaseBlockedPods) or Finalizers (no pod left, the ModelService stays in deletion; see releaseBlockedFinalizers).'),
    releaseBlockedPods: z.array(z.string()).nullable().describe('The pods that still exist and keep the quota (ReleaseBlocked).'),
    releaseBlockedFinalizers: z.array(z.string()).nullable().describe('The finalizers that keep the ModelService in deletion (ReleaseBlocked, reason Finalizers).'),
    lastError: z
      .string()
      .nullable()
      .describe(
        `The error a pending outbox row (a delivery, a delete) is being retried for; else the reason of the last transition (conflict, never Ready). Printable (no control characters), at most ${LAST_ERROR_MAX_CHARS} characters; it names nothing internal (no API path, namespace, SQL or stack): lastErrorCode says what it is.`,
      ),
    lastErrorCode: z
      .enum(LAST_ERROR_CODES)
      .nullable()
      .describe('The stable code of lastError (null with it). Unclassified: a text without a code (an operator\'s note on a resolved conflict, or one written by an older version).'),
    nextAttemptAt: timestamp
      .nullable()
      .describe('When the controller next works on a pending outbox row of this admission (retries back off to OUTBOX_BACKOFF_CAP_MS); null when none is pending.'),
    deadOutboxRows: z.number().int().min(0).describe('Outbox deliveries that failed permanently and need an operator.'),
    timeline: timelineSchema,
    queue: queueInfoSchema.nullable(),
    autoscaleStatus: autoscaleStatusSchema
      .nullable()
      .describe('With spec.autoscale: what the autoscaler decided last and why (desired replicas, the load it saw, panic mode, its last change) and its conditions (QuotaLimited with the shortfall, MetricsUnavailable, Panic); null before its first decision or without autoscale.'),
    lastFailure: failureSchema
      .nullable()
      .describe(
        `The most recent pod failure the controller saw (pod, container, exit code, message, when first seen); kept after it cleared. reason is one of ${FAILURE_REASONS.join(', ')}. message is the container's termination message, the registry's or the scheduler's words: printable (no control characters), at most ${FAILURE_MESSAGE_MAX_CHARS} characters.`,
      ),
  })
  .describe('An admitted request to run a model: a reservation of quota.');
export type Admission = z.output<typeof admissionSchema>;

export const admissionListSchema = z
  .object({
    items: z.array(admissionSchema),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next (older) page; null on the last page.'),
  })
  .describe('Admissions of the calling tenant, newest first.');

export const listQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size (1..100).'),
  cursor: admissionId.optional().describe('The `nextCursor` of the previous page.'),
});

export const modelSchema = z
  .object({
    id: admissionId.describe('The admission id: the model is called at /v1/models/{id}/chat/completions and /v1/models/{id}/completions.'),
    object: z.literal('model'),
    created: z.number().int().describe('When it was admitted, in seconds since the epoch.'),
    owned_by: z.string().describe('The tenant.'),
    name: z.string().describe('The admission name.'),
  })
  .describe('One ready model of the calling tenant (OpenAI model object).');

export const modelListSchema = z
  .object({ object: z.literal('list'), data: z.array(modelSchema) })
  .describe('The calling tenant\'s admissions in state `ready`, newest first (OpenAI list).');
export type ModelList = z.output<typeof modelListSchema>;

export const resourceUsageSchema = z.object({
  unit: z.enum(['millicores', 'MiB', 'count']),
  hard: z.number().int().describe('The tenant quota.'),
  reserved: z.number().int().describe('Charged and not yet released (all states but released).'),
  active: z.number().int().describe('Held by admitted, delivered and ready admissions.'),
  releasing: z.number().int().describe('Held by deleting and releasing admissions (pods not yet gone).'),
  blocked: z.number().int().describe('Part of `releasing` whose release is blocked by pods stuck terminating.'),
  conflict: z.number().int().describe('Held by admissions in conflict (an operator must resolve them).'),
  available: z.number().int().describe('hard − reserved, at least 0.'),
});

export const quotaSchema = z
  .object({
    tenant: z.string(),
    resources: z.object(Object.fromEntries(RESOURCE_NAMES.map((r) => [r, resourceUsageSchema])) as Record<
      (typeof RESOURCE_NAMES)[number],
      typeof resourceUsageSchema
    >),
  })
  .describe('Quota and usage of the calling tenant per resource.');
export type Quota = z.output<typeof quotaSchema>;

export const healthSchema = z.object({
  ok: z.boolean(),
  database: z.enum(['up', 'down']).optional().describe('Only for an authenticated caller: the database answered (the deep check). Anonymous: liveness only.'),
});

export const ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'malformed_json',
  'ambiguous_json',
  'unauthorized',
  'not_found',
  'method_not_allowed',
  'quota_exceeded',
  'no_cluster_capacity',
  'cluster_capacity_exceeded',
  'conflict',
  'change_pending',
  'autoscaled',
  'idempotency_key_reused',
  'rate_limited',
  'payload_too_large',
  'unsupported_media_type',
  'database_unavailable',
  'misconfigured',
  'internal',
  'model_not_ready',
  'model_unavailable',
  'inference_unavailable',
  'gateway_error',
  'gateway_timeout',
  'client_closed',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .describe('Every error response has this shape.');
export type ErrorEnvelope = z.output<typeof errorEnvelopeSchema>;

/** One field error of a 400 validation_failed: `path` is the dotted field path ("resources.cpu"). */
export interface FieldIssue {
  path: string;
  message: string;
}

/** One open cluster of a 409 no_cluster_capacity and the resources it lacks for the admission (no amounts: they would tell about other tenants' use). */
export interface ClusterShort {
  cluster: string;
  resources: Array<(typeof RESOURCE_NAMES)[number]>;
}

/** One short resource of a 409 quota_exceeded. */
export interface Shortfall {
  resource: (typeof RESOURCE_NAMES)[number];
  requested: number;
  available: number;
  short: number;
}
