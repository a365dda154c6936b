// The admission request (POST /requests): a DNS-1123 name plus the workload shape shared
// with the ModelService spec. Parsing yields the canonical spec (defaults applied) and the
// integer amounts charged against the tenant quota. Pure: no I/O.
import { canonicalJson } from './canonical-json.ts';
import { z } from 'zod';
import {
  dns1123Label,
  modelServiceSpecSchema,
  requestedResourcesSchema,
  totalAmounts,
  workloadShape,
  type Amounts,
  type ModelServiceSpec,
} from './model-service.ts';
import { autoscaleSpecSchema } from './autoscale.ts';
import { applyResourcePolicy, imageRefusal, type RegistryRule, type ResourcePolicy } from './policy.ts';

export const DEFAULT_MAX_REPLICAS = 16;
/** The longest a queued admission may be asked to wait (queueTtlSeconds): 7 days. */
export const MAX_QUEUE_TTL_SECONDS = 7 * 24 * 3600;

/** Reservation states (docs/design.md, "The reservation state machine"). */
export const RESERVATION_STATES = ['queued', 'admitted', 'delivered', 'ready', 'deleting', 'releasing', 'released', 'conflict', 'cancelled', 'expired'] as const;
export type ReservationState = (typeof RESERVATION_STATES)[number];
/** States that hold quota and run (or are about to run) a workload. */
export const ACTIVE_STATES = ['admitted', 'delivered', 'ready'] as const satisfies readonly ReservationState[];
/** States on the way to release: still charged until the pods are really gone. */
export const RELEASING_STATES = ['deleting', 'releasing'] as const satisfies readonly ReservationState[];
/** Waiting for quota (`onShortQuota: "queue"`): nothing charged, nothing delivered yet. */
export const QUEUED_STATES = ['queued'] as const satisfies readonly ReservationState[];
/** Left the queue without ever being charged: deleted while queued, or its queueTtlSeconds ran out. */
export const UNCHARGED_END_STATES = ['cancelled', 'expired'] as const satisfies readonly ReservationState[];
/** States the scheduled sweep does not enqueue (nothing to reconcile automatically). */
export const TERMINAL_STATES = ['released', 'conflict', ...UNCHARGED_END_STATES] as const satisfies readonly ReservationState[];
/** States the controller reconciles and the cron sweep looks at: every state but the terminal
 *  ones and `queued` (nothing of a queued admission exists in a cluster). */
export const RECONCILED_STATES = RESERVATION_STATES.filter(
  (s) => !(TERMINAL_STATES as readonly string[]).includes(s) && !(QUEUED_STATES as readonly string[]).includes(s),
);
/** States that never held a charge (and so never appear in a quota sum). */
export const NEVER_CHARGED_STATES = [...QUEUED_STATES, ...UNCHARGED_END_STATES] as const satisfies readonly ReservationState[];
/** States that hold no charge now: released, or never charged. */
export const UNCHARGED_STATES = ['released', ...NEVER_CHARGED_STATES] as const satisfies readonly ReservationState[];
/** Whether a reservation in `state` holds its charge (and its room on a cluster). */
export const holdsCharge = (state: string): boolean => !(UNCHARGED_STATES as readonly string[]).includes(state);

/** Why a release waits (`ReleaseBlocked`): pods that still exist, or — no pod left — the
 *  finalizers that keep the ModelService in deletion. */
export const RELEASE_BLOCKED_REASONS = ['PodsStillPresent', 'Finalizers'] as const;
export type ReleaseBlockedReason = (typeof RELEASE_BLOCKED_REASONS)[number];

/** A tenant name: used in Kubernetes label values, so a DNS-1123 label. */
export const tenantName = dns1123Label;

/** `Idempotency-Key` header: 1..255 printable ASCII characters. */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'must be 1 to 255 printable ASCII characters without spaces');

/** Reservation (admission) id: a ULID (26 Crockford base-32 characters). */
export const admissionId = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an admission id (ULID)');

/**
 * The request body of POST /requests. `maxReplicas` is deployment configuration
 * (`MAX_REPLICAS`). Strict: unknown fields — `tenant` in particular — are rejected.
 */
export function admissionRequestSchema(maxReplicas: number = DEFAULT_MAX_REPLICAS) {
  return z
    .strictObject({
      name: dns1123Label.describe('Name of the model service (DNS-1123 label), chosen by the tenant.'),
      ...workloadShape,
      replicas: workloadShape.replicas.max(maxReplicas).describe(`Desired number of pods (0..${maxReplicas}).`),
      resources: requestedResourcesSchema.default({}),
      autoscale: autoscaleSpecSchema(maxReplicas)
        .optional()
        .describe(`Scale replicas on the pods' load, within minReplicas..maxReplicas (1..${maxReplicas}); replicas is where it starts. Each scale-up is charged before its pods are created, as far as the quota allows (QuotaLimited beyond).`),
      onShortQuota: z
        .enum(['refuse', 'queue'])
        .default('refuse')
        .describe(
          'What to do when the quota is short: "refuse" (409 quota_exceeded, the default) or "queue": 202 with the admission queued (nothing charged), admitted the moment enough quota frees up, in FIFO order behind the tenant\'s earlier queued admissions.',
        ),
      queueTtlSeconds: z
        .number()
        .int()
        .min(1)
        .max(MAX_QUEUE_TTL_SECONDS)
        .optional()
        .describe(`With onShortQuota "queue": how long it may wait (1..${MAX_QUEUE_TTL_SECONDS} s); then it expires, never charged. Without it a queued admission waits until admitted or cancelled.`),
    })
    .refine((r) => r.autoscale === undefined || (r.replicas >= r.autoscale.minReplicas && r.replicas <= r.autoscale.maxReplicas), {
      path: ['replicas'],
      message: 'with autoscale, replicas must be within minReplicas..maxReplicas',
    })
    .refine((r) => r.queueTtlSeconds === undefined || r.onShortQuota === 'queue', { path: ['queueTtlSeconds'], message: 'only with "onShortQuota": "queue"' })
    .describe('A request to run a model image. The tenant is taken from the API key, never from the body.');
}
export type AdmissionRequest = z.output<ReturnType<typeof admissionRequestSchema>>;

export interface ParsedAdmission {
  name: string;
  /** The canonical ModelService spec (defaults applied, keys in schema order). */
  spec: ModelServiceSpec;
  /** TOTAL amounts charged: per-replica × replicas, and 1 modelservices. */
  amounts: Amounts;
  /** What the request hash covers: the request as validated, before the operator's defaults. */
  hashInput: string;
  /** Queue when the quota is short (`onShortQuota: "queue"`), expiring after ttlSeconds (null: never); null: refuse. */
  queue: { ttlSeconds: number | null } | null;
}

/** The operator's admission policy (schema/policy.ts), as the Worker configured it. */
export interface AdmissionPolicy extends ResourcePolicy {
  allowedRegistries: readonly RegistryRule[];
}

export type AdmissionDecision = { ok: true; admission: ParsedAdmission } | { ok: false; issues: Array<{ path: string; message: string }> };

/**
 * Splits a validated request into the name, the canonical CR spec and the amounts to charge,
 * applying the policy: cpu/memory defaults written into the spec (so the pods run with exactly
 * what is charged), per-replica minimums and maximums, and the allowed image registries.
 */
export function toAdmission(req: AdmissionRequest, policy: AdmissionPolicy): AdmissionDecision {
  const { name, onShortQuota, queueTtlSeconds, ...workload } = req;
  const resources = applyResourcePolicy(workload.resources, policy);
  const refusal = imageRefusal(workload.image, policy.allowedRegistries);
  const issues = [...resources.issues, ...(refusal ? [{ path: 'image', message: refusal }] : [])];
  if (!('resources' in resources) || issues.length > 0) return { ok: false, issues };
  const spec = modelServiceSpecSchema.parse({ ...workload, resources: resources.resources });
  const queue = onShortQuota === 'queue' ? { ttlSeconds: queueTtlSeconds ?? null } : null;
  // A refusing request hashes as it always did; a queueing one covers its queue choice too.
  const hashInput = canonicalJson(queue ? { name, spec: workload, queue } : { name, spec: workload });
  return { ok: true, admission: { name, spec, amounts: totalAmounts(spec), hashInput, queue } };
}

/** The Kubernetes name of the CR for an admission: known before it is created. */
export const crNameFor = (id: string): string => `md-${id.toLowerCase()}`;
