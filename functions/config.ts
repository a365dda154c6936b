// Worker configuration: vars from wrangler.toml, secrets (DATABASE_URL, ADMISSION_KEYS_JSON)
// from `wrangler secret put` in production and `.dev.vars` locally. Validated with zod once
// per isolate; an invalid configuration fails every request with a clear 500 `misconfigured`.
import { z } from 'zod';
import { DEFAULT_MAX_REPLICAS } from '../schema/admission.ts';

export interface Env {
  DATABASE_URL?: string;
  ADMISSION_KEYS_JSON?: string;
  MAX_REPLICAS?: string | number;
  MAX_BODY_BYTES?: string | number;
  RECONCILE_STALE_AFTER_SECONDS?: string | number;
  RECONCILE_PAGE_SIZE?: string | number;
  RECONCILE_MAX_STATEMENTS?: string | number;
  OUTBOX_RETENTION_DAYS?: string | number;
  DB_TIMEOUT_MS?: string | number;
}

const intVar = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

const configSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^https?$/, error: 'DATABASE_URL must be an http(s) URL with credentials (see docs/admission-api.md)' }),
  MAX_REPLICAS: intVar(DEFAULT_MAX_REPLICAS, 1, 1000),
  MAX_BODY_BYTES: intVar(256 * 1024, 1024, 8 * 1024 * 1024),
  RECONCILE_STALE_AFTER_SECONDS: intVar(300, 0, 7 * 24 * 3600),
  RECONCILE_PAGE_SIZE: intVar(200, 1, 1000),
  /** Statements (= subrequests) one scheduled() run may spend; the free plan allows 50. */
  RECONCILE_MAX_STATEMENTS: intVar(40, 4, 900),
  /** Days acknowledged outbox rows are kept (0 = forever). */
  OUTBOX_RETENTION_DAYS: intVar(7, 0, 3650),
  /** Deadline of a request's database work, all round trips together (a hung database → 503). */
  DB_TIMEOUT_MS: intVar(5000, 100, 60_000),
});

export interface Config {
  databaseUrl: string;
  maxReplicas: number;
  maxBodyBytes: number;
  reconcileStaleAfterMs: number;
  reconcilePageSize: number;
  reconcileMaxStatements: number;
  outboxRetentionMs: number;
  dbTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function parseConfig(env: Env): Config {
  const r = configSchema.safeParse(env);
  if (!r.success) {
    throw new ConfigError(`invalid Worker configuration: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const c = r.data;
  return {
    databaseUrl: c.DATABASE_URL,
    maxReplicas: c.MAX_REPLICAS,
    maxBodyBytes: c.MAX_BODY_BYTES,
    reconcileStaleAfterMs: c.RECONCILE_STALE_AFTER_SECONDS * 1000,
    reconcilePageSize: c.RECONCILE_PAGE_SIZE,
    reconcileMaxStatements: c.RECONCILE_MAX_STATEMENTS,
    outboxRetentionMs: c.OUTBOX_RETENTION_DAYS * 86_400_000,
    dbTimeoutMs: c.DB_TIMEOUT_MS,
  };
}
