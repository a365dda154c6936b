// The ModelService custom resource (modeldock.io/v1alpha1): spec and status.
// Single source of truth for the controller's types, the admission API's request body
// (see admission.ts) and the CRD's openAPIV3Schema (generated with z.toJSONSchema).
import { z } from 'zod';
import { forbiddenEnvName } from './env-policy.ts';
import { parseImage, REFERENCE_PATTERN } from './image-reference.ts';
import { cpuMillis, memoryMiB, QUANTITY_PATTERN, QuantityError, wholeCount } from './quantity.ts';
import { autoscaleSpecSchema } from './autoscale.ts';

export const GROUP = 'modeldock.io';
export const VERSION = 'v1alpha1';
export const KIND = 'ModelService';
export const PLURAL = 'modelservices';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const FINALIZER = 'modeldock.io/finalizer';
export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  admissionId: 'modeldock.io/admission-id',
  tenant: 'modeldock.io/tenant',
  /** The controller installation an object belongs to, when the controller runs with INSTANCE set (several installs in one cluster). */
  instance: 'modeldock.io/instance',
  /** Name of the ModelService a Deployment, Service or Pod belongs to (the pod selector). */
  modelService: 'modeldock.io/model-service',
} as const;
export const MANAGED_BY = 'modeldock';
export const ANNOTATIONS = {
  requestId: 'modeldock.io/request-id',
  admittedAt: 'modeldock.io/admitted-at',
} as const;

/** DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, ≤ 63. */
export const dns1123Label = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit');

/**
 * An image reference as the container runtime reads it (schema/image-reference.ts, the grammar of
 * github.com/distribution/reference): `[registry[:port]/]path[:tag][@sha256:digest]`. A reference
 * the runtime would refuse, or read differently from how it is written — a registry part that is
 * not a host, a port outside 1..65535, an upper-case repository, a 64-hex image id — is refused,
 * with the reason. The CRD's `pattern` is the library's anchored grammar, which every accepted
 * reference matches.
 */
export const imageReference = z
  .string()
  .min(1, { abort: true })
  .max(512, { abort: true })
  .superRefine((image, ctx) => {
    const parsed = parseImage(image);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: `must be an OCI image reference such as ghcr.io/org/model:1.2 or registry.local:5000/model@sha256:<64 hex>, as the container runtime reads it: ${parsed.reason}` });
    }
  })
  .meta({ pattern: REFERENCE_PATTERN });

const quantity = (what: string, parse: (q: string) => number) =>
  z
    .string()
    .regex(new RegExp(QUANTITY_PATTERN), { message: `${what} must be a Kubernetes quantity, e.g. 500m, 2, 4Gi`, abort: true })
    .superRefine((q, ctx) => {
      try {
        parse(q);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof QuantityError ? err.message : String(err) });
      }
    });

const resourceFields = {
  cpu: quantity('cpu', cpuMillis).describe('CPU per replica (Kubernetes quantity, e.g. 500m or 2).'),
  memory: quantity('memory', memoryMiB).describe('Memory per replica (Kubernetes quantity, e.g. 512Mi or 4Gi).'),
  'nvidia.com/gpu': quantity('nvidia.com/gpu', wholeCount).optional().describe('Whole GPUs per replica.'),
};

/**
 * Resources of ONE replica in a ModelService: cpu and memory are required (nothing runs for
 * free), GPUs optional. Every container ModelDock generates carries exactly these as requests
 * AND limits, and the ledger charges them times replicas.
 */
export const resourcesSchema = z
  .strictObject(resourceFields)
  .describe('Resources requested and limited per replica; charged against the tenant quota times replicas.');

/**
 * The same in an admission request: cpu and memory may be left out, then the Worker's configured
 * per-replica defaults are charged and written into the spec (admission.ts).
 */
export const requestedResourcesSchema = z
  .strictObject({ ...resourceFields, cpu: resourceFields.cpu.optional(), memory: resourceFields.memory.optional() })
  .describe('Resources per replica; cpu and memory default to the operator-configured defaults when left out.');

export const envVarSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[-._a-zA-Z][-._a-zA-Z0-9]*$/, 'must be a valid environment variable name')
    .superRefine((name, ctx) => {
      const why = forbiddenEnvName(name);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    }),
  value: z.string().max(32_768),
});

/** The most replicas a ModelService can state (the Worker's MAX_REPLICAS bounds admissions further). */
export const CR_MAX_REPLICAS = 1000;
export const DEFAULT_PORT = 8000;
export const DEFAULT_READINESS_PATH = '/healthz';

/** Fields shared by the admission request and the CR spec (everything but identity). */
export const workloadShape = {
  image: imageReference.describe('Container image of the model server.'),
  replicas: z.number().int().min(0).describe('Desired number of pods.'),
  port: z.number().int().min(1).max(65535).default(DEFAULT_PORT).describe('Port the model server listens on; the Service exposes it.'),
  resources: resourcesSchema,
  env: z
    .array(envVarSchema)
    .max(64)
    .default([])
    .refine((env) => new Set(env.map((e) => e.name)).size === env.length, 'environment variable names must be unique')
    .describe('Environment variables of the model container.'),
  args: z.array(z.string().max(4096)).max(64).default([]).describe('Arguments of the model container.'),
  readinessPath: z
    .string()
    .max(256)
    .regex(/^\/[\x21-\x7e]*$/, 'must be an absolute HTTP path without spaces')
    .default(DEFAULT_READINESS_PATH)
    .describe('HTTP path of the readiness probe.'),
  autoscale: autoscaleSpecSchema(CR_MAX_REPLICAS)
    .optional()
    .describe('Scale replicas on the pods\' load (absent: replicas stay as set). The controller charges every scale-up in the ledger before it changes the Deployment.'),
};

export const modelServiceSpecSchema = z.strictObject(workloadShape).describe('Desired state of a ModelService.');
export type ModelServiceSpec = z.output<typeof modelServiceSpecSchema>;
export type Resources = z.output<typeof resourcesSchema>;

/** In-cluster URL of a ModelService's Service (named like the ModelService). */
export const endpointFor = (name: string, namespace: string, port: number): string => `http://${name}.${namespace}.svc:${port}`;

/** The resources a replica asks for (requests = limits), in the pod and charged per replica. */
export const REPLICA_RESOURCES = ['cpu', 'memory', 'nvidia.com/gpu'] as const;
export type ReplicaResource = (typeof REPLICA_RESOURCES)[number];
/** Every quota resource: the replica resources, and `modelservices`, a count of 1 per admission. */
export const RESOURCE_NAMES = [...REPLICA_RESOURCES, 'modelservices'] as const;
export type ResourceName = (typeof RESOURCE_NAMES)[number];

/** Integer ledger amounts of ONE replica: cpu millicores, memory MiB, GPU count. */
export type ReplicaAmounts = Record<ReplicaResource, number>;
/** Integer ledger amounts of a whole admission: the replica amounts × replicas, plus its count. */
export type Amounts = Record<ResourceName, number>;
/** Nothing of any resource (a decrease charges nothing up front). */
export const NO_AMOUNTS: Readonly<Amounts> = Object.freeze({ cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 });

/** Per resource: the ledger unit, and the parser from a Kubernetes quantity (or a count) into it. */
export const RESOURCE_UNITS: Readonly<Record<ResourceName, { unit: 'millicores' | 'MiB' | 'count'; parse: (q: string) => number }>> = {
  cpu: { unit: 'millicores', parse: cpuMillis },
  memory: { unit: 'MiB', parse: memoryMiB },
  'nvidia.com/gpu': { unit: 'count', parse: wholeCount },
  modelservices: { unit: 'count', parse: wholeCount },
};

/** The ledger amounts of one replica; a resource the spec does not name is 0. */
export function amountsPerReplica(r: Partial<Record<ReplicaResource, string>>): ReplicaAmounts {
  const out = {} as ReplicaAmounts;
  for (const name of REPLICA_RESOURCES) {
    const q = r[name];
    out[name] = q ? RESOURCE_UNITS[name].parse(q) : 0;
  }
  return out;
}

/** What a workload charges against the quota: per-replica amounts times replicas, and 1 ModelService (even at 0 replicas). */
export function totalAmounts(spec: { replicas: number; resources: Partial<Record<ReplicaResource, string>> }): Amounts {
  const one = amountsPerReplica(spec.resources);
  const out = { modelservices: 1 } as Amounts;
  for (const name of REPLICA_RESOURCES) out[name] = one[name] * spec.replicas;
  return out;
}

/**
 * The canonical Kubernetes quantity of a ledger amount: what a container's requests and limits
 * say, so that the pod asks for exactly what was charged ("1G" is charged 954 MiB and runs as 954Mi).
 */
export const QUANTITY_OF: Readonly<Record<ReplicaResource, (amount: number) => string>> = {
  cpu: (m) => `${m}m`,
  memory: (mib) => `${mib}Mi`,
  'nvidia.com/gpu': (n) => String(n),
};

/** Requests (= limits) of one replica's container: the canonical quantities of what is charged. */
export function containerResources(r: Partial<Record<ReplicaResource, string>>): Record<string, string> {
  const one = amountsPerReplica(r);
  const out: Record<string, string> = {};
  for (const name of REPLICA_RESOURCES) if (one[name] > 0) out[name] = QUANTITY_OF[name](one[name]);
  return out;
}

// ---------------------------------------------------------------- status

export const PHASES = ['Pending', 'Progressing', 'Running', 'Degraded', 'Terminating'] as const;
export type Phase = (typeof PHASES)[number];

/** metav1.Condition. */
export const conditionSchema = z.object({
  type: z.string().describe('Condition type, e.g. Ready, Progressing, ReleaseBlocked.'),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.number().int().min(0).optional(),
  lastTransitionTime: z.string().describe('When status last changed (RFC 3339).'),
  reason: z.string().describe('CamelCase reason for the last transition.'),
  message: z.string(),
});
export type Condition = z.output<typeof conditionSchema>;

export const failureSchema = z.object({
  reason: z.string().describe('e.g. ImagePullBackOff, CrashLoopBackOff.'),
  message: z.string(),
  pod: z.string().optional(),
  container: z.string().optional(),
  exitCode: z.number().int().optional(),
  at: z.string().optional().describe('When this failure was first seen (RFC 3339).'),
});
export type Failure = z.output<typeof failureSchema>;

export const modelServiceStatusSchema = z
  .object({
    observedGeneration: z.number().int().min(0).optional().describe('The spec generation this status describes.'),
    phase: z.enum(PHASES).optional(),
    replicas: z.number().int().min(0).optional(),
    readyReplicas: z.number().int().min(0).optional(),
    availableReplicas: z.number().int().min(0).optional(),
    selector: z.string().optional().describe('Label selector of the pods (for the scale subresource).'),
    endpoint: z.string().optional().describe('In-cluster URL of the Service.'),
    admittedAt: z.string().optional().describe('When the admission was accepted.'),
    deliveredAt: z.string().optional().describe('When this object was created: the admission was delivered.'),
    scheduledAt: z.string().optional().describe('When the first pod was bound to a node.'),
    startedAt: z.string().optional().describe('When the first container started running.'),
    readyAt: z.string().optional().describe('When the Service first had a ready endpoint.'),
    lastFailure: failureSchema.optional().describe('The most recent pod failure seen.'),
    conditions: z.array(conditionSchema).optional(),
  })
  .describe('Observed state of a ModelService.');
export type ModelServiceStatus = z.output<typeof modelServiceStatusSchema>;

export interface ModelService {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec: ModelServiceSpec;
  status?: ModelServiceStatus;
}
