// Worker configuration: vars from wrangler.toml, secrets (DATABASE_URL, ADMISSION_KEYS_JSON,
// GATEWAY_CREDENTIAL_KEY) from `wrangler secret put` in production and `.dev.vars` locally. MODELDOCK_ENV says whether
// the Worker runs in production (wrangler.toml sets "production"; unset means production too):
// there ADMISSION_KEYS_JSON must hold digests only. Local dev and tests set "development".
// Validated with zod once per isolate; an invalid configuration fails every request with a fixed
// 500 `misconfigured` (the detail goes to the log, once, never to a caller).
import { z } from 'zod';
import { DEFAULT_MAX_REPLICAS, type AdmissionPolicy } from '../schema/admission.ts';
import { cpuMillis, memoryMiB } from '../schema/quantity.ts';
import { parseRegistryList } from '../schema/policy.ts';
import { gatewayOf, publicUrlOf, type GatewayConfig, type Parsed } from './gateway-config.ts';
import { DEFAULT_PLACEMENT_POLICY, PLACEMENT_POLICIES, placementPolicy, type PlacementPolicy } from '../ledger/placement-policy.ts';

export interface Env {
  DATABASE_URL?: string;
  ADMISSION_KEYS_JSON?: string;
  MODELDOCK_ENV?: string;
  MAX_REPLICAS?: string | number;
  MAX_BODY_BYTES?: string | number;
  RECONCILE_STALE_AFTER_SECONDS?: string | number;
  RECONCILE_PAGE_SIZE?: string | number;
  RECONCILE_MAX_STATEMENTS?: string | number;
  OUTBOX_RETENTION_DAYS?: string | number;
  DEFAULT_CPU?: string;
  DEFAULT_MEMORY?: string;
  MIN_CPU?: string;
  MIN_MEMORY?: string;
  MAX_CPU?: string;
  MAX_MEMORY?: string;
  ALLOWED_IMAGE_REGISTRIES?: string;
  DB_TIMEOUT_MS?: string | number;
  /** "on" (the default): the rate-limiting bindings below are required; "off": no rate limits. */
  RATE_LIMITS?: string;
  /** How admissions are placed on clusters (ledger/placement-policy.ts): least-loaded (default) or affinity. */
  PLACEMENT_POLICY?: string;
  /** Rate-limiting bindings (wrangler.toml [[ratelimits]]; functions/rate-limit.ts). */
  IP_RATE_LIMITER?: unknown;
  TENANT_RATE_LIMITER?: unknown;
  /** The in-cluster gateway's base URL (functions/gateway-config.ts); with GATEWAY_CREDENTIAL_KEY or not at all. */
  GATEWAY_URL?: string;
  /** Secret: {"id":"k1","secret":"…"}, the key the inference credential is signed with. */
  GATEWAY_CREDENTIAL_KEY?: string;
  GATEWAY_HEADERS_TIMEOUT_MS?: string | number;
  /** https://host[:port]: the base of the URLs tenants are given; unset = the request's origin. */
  PUBLIC_URL?: string;
}

const intVar = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

/** A Kubernetes quantity var, checked with the ledger's parser (empty = unset). */
const quantityVar = (parse: (q: string) => number) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => {
      if (v === undefined) return true;
      try {
        parse(v);
        return true;
      } catch {
        return false;
      }
    }, 'must be a Kubernetes quantity such as 250m, 2, 512Mi or 4Gi');

/** Shipped per-replica bounds (docs/admission-api.md "Resources"); k8s/base/limits.yaml matches them. */
export const POLICY_DEFAULTS = { MIN_CPU: '10m', MIN_MEMORY: '16Mi', MAX_CPU: '16', MAX_MEMORY: '64Gi' } as const;

const configSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^https?$/, error: 'DATABASE_URL must be an http(s) URL with credentials (see docs/admission-api.md)' }),
  /** production (the default): ADMISSION_KEYS_JSON holds digests only; development: plaintext keys too. */
  MODELDOCK_ENV: z.enum(['production', 'development'], { error: 'MODELDOCK_ENV must be "production" or "development"' }).default('production'),
  MAX_REPLICAS: intVar(DEFAULT_MAX_REPLICAS, 1, 1000),
  MAX_BODY_BYTES: intVar(256 * 1024, 1024, 8 * 1024 * 1024),
  RECONCILE_STALE_AFTER_SECONDS: intVar(300, 0, 7 * 24 * 3600),
  RECONCILE_PAGE_SIZE: intVar(200, 1, 1000),
  /** Statements (= subrequests) one scheduled() run may spend; the free plan allows 50. */
  RECONCILE_MAX_STATEMENTS: intVar(40, 4, 900),
  /** Days acknowledged outbox rows are kept (0 = forever). */
  OUTBOX_RETENTION_DAYS: intVar(7, 0, 3650),
  /** Per-replica cpu and memory charged (and run) when a request leaves them out; unset = 400. */
  DEFAULT_CPU: quantityVar(cpuMillis),
  DEFAULT_MEMORY: quantityVar(memoryMiB),
  MIN_CPU: quantityVar(cpuMillis),
  MIN_MEMORY: quantityVar(memoryMiB),
  MAX_CPU: quantityVar(cpuMillis),
  MAX_MEMORY: quantityVar(memoryMiB),
  /** Comma list of host[:port][/path] an image must come from, or `*` for any; empty or absent is refused. */
  ALLOWED_IMAGE_REGISTRIES: z.string().optional(),
  /** Deadline of a request's database work, all round trips together (a hung database → 503). */
  DB_TIMEOUT_MS: intVar(5000, 100, 60_000),
  /** "off" runs without the rate-limiting bindings (functions/rate-limit.ts); anything else is refused. */
  RATE_LIMITS: z.enum(['on', 'off'], { error: 'RATE_LIMITS must be "on" or "off"' }).default('on'),
  PLACEMENT_POLICY: z
    .enum(Object.keys(PLACEMENT_POLICIES) as [string, ...string[]], { error: `PLACEMENT_POLICY must be one of ${Object.keys(PLACEMENT_POLICIES).join(', ')}` })
    .default(DEFAULT_PLACEMENT_POLICY),
  /** Deadline of the gateway's response headers: a request the model queues gets them only when a slot takes it. */
  GATEWAY_HEADERS_TIMEOUT_MS: intVar(120_000, 1000, 600_000),
});

export interface Config {
  databaseUrl: string;
  /** MODELDOCK_ENV=production: a plaintext key in ADMISSION_KEYS_JSON refuses the key document. */
  production: boolean;
  maxReplicas: number;
  maxBodyBytes: number;
  reconcileStaleAfterMs: number;
  reconcilePageSize: number;
  reconcileMaxStatements: number;
  outboxRetentionMs: number;
  policy: AdmissionPolicy;
  dbTimeoutMs: number;
  /** RATE_LIMITS: true = the rate-limiting bindings are required and applied. */
  rateLimits: boolean;
  /** Where inference requests go and how they are signed; undefined = the inference routes answer 503 inference_unavailable. */
  gateway: GatewayConfig | undefined;
  /** PUBLIC_URL as an origin (no trailing slash), or undefined: tenant-facing URLs use the request's origin. */
  publicUrl: string | undefined;
  placementPolicy: PlacementPolicy;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function checked<T>(r: Parsed<T>): T {
  if (!r.ok) throw new ConfigError(`invalid Worker configuration: ${r.problem}`);
  return r.value;
}

export function parseConfig(env: Env): Config {
  const r = configSchema.safeParse(env);
  if (!r.success) {
    throw new ConfigError(`invalid Worker configuration: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const c = r.data;
  let allowedRegistries;
  try {
    allowedRegistries = parseRegistryList(c.ALLOWED_IMAGE_REGISTRIES);
  } catch (err) {
    throw new ConfigError(`invalid Worker configuration: ${(err as Error).message}`);
  }
  const policy: AdmissionPolicy = {
    defaults: { ...(c.DEFAULT_CPU ? { cpu: c.DEFAULT_CPU } : {}), ...(c.DEFAULT_MEMORY ? { memory: c.DEFAULT_MEMORY } : {}) },
    min: { cpu: cpuMillis(c.MIN_CPU ?? POLICY_DEFAULTS.MIN_CPU), memory: memoryMiB(c.MIN_MEMORY ?? POLICY_DEFAULTS.MIN_MEMORY) },
    max: { cpu: cpuMillis(c.MAX_CPU ?? POLICY_DEFAULTS.MAX_CPU), memory: memoryMiB(c.MAX_MEMORY ?? POLICY_DEFAULTS.MAX_MEMORY) },
    allowedRegistries,
  };
  for (const [name, unit] of [['cpu', 'CPU'], ['memory', 'MEMORY']] as const) {
    if (policy.min[name] > policy.max[name]) throw new ConfigError(`invalid Worker configuration: MIN_${unit} is above MAX_${unit}`);
    const d = policy.defaults[name];
    const amount = d === undefined ? undefined : name === 'cpu' ? cpuMillis(d) : memoryMiB(d);
    if (amount !== undefined && (amount < policy.min[name] || amount > policy.max[name])) {
      throw new ConfigError(`invalid Worker configuration: DEFAULT_${unit} is outside MIN_${unit}..MAX_${unit}`);
    }
  }
  return {
    gateway: checked(gatewayOf(env, c.GATEWAY_HEADERS_TIMEOUT_MS)),
    publicUrl: checked(publicUrlOf(env.PUBLIC_URL)),
    databaseUrl: c.DATABASE_URL,
    production: c.MODELDOCK_ENV === 'production',
    maxReplicas: c.MAX_REPLICAS,
    maxBodyBytes: c.MAX_BODY_BYTES,
    reconcileStaleAfterMs: c.RECONCILE_STALE_AFTER_SECONDS * 1000,
    reconcilePageSize: c.RECONCILE_PAGE_SIZE,
    reconcileMaxStatements: c.RECONCILE_MAX_STATEMENTS,
    outboxRetentionMs: c.OUTBOX_RETENTION_DAYS * 86_400_000,
    policy,
    dbTimeoutMs: c.DB_TIMEOUT_MS,
    rateLimits: c.RATE_LIMITS === 'on',
    placementPolicy: placementPolicy(c.PLACEMENT_POLICY),
  };
}
