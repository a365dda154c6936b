// The gateway's settings, from the environment (zod-validated). parseEnv is pure: main.ts prints
// what it answers and exits; the tests read the defaults and the refusals from it.
import { z } from 'zod';
import { dns1123Label } from '../schema/model-service.ts';
import { namespacePrefixSetting } from '../schema/tenant-namespace.ts';

/** The gauges summed as a pod's load: the mock's and vLLM's running and waiting requests. */
export const DEFAULT_LOAD_METRICS = ['modeldock_mock_slots_busy', 'modeldock_mock_queue_depth', 'vllm:num_requests_running', 'vllm:num_requests_waiting'];
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const port = (def: number) => z.coerce.number().int().min(0).max(65_535).default(def);

const gatewayEnvSchema = z.object({
  PORT: port(8080),
  METRICS_PORT: port(9090),
  MAX_BODY_BYTES: int(1 << 20, 1),
  KUBECONFIG: z.string().min(1).optional(),
  INSTANCE: dns1123Label.optional(),
  TENANT_NAMESPACE_PREFIX: namespacePrefixSetting,
  CREDENTIAL_KEYS_DIR: z.string().min(1).default('/etc/modeldock/gateway-keys'),
  BALANCE: z.enum(['least-load', 'round-robin']).default('least-load'),
  SCRAPE_INTERVAL_MS: int(500, 50),
  METRICS_STALE_MS: int(2_000, 1),
  LOAD_METRICS: z
    .string()
    .default(DEFAULT_LOAD_METRICS.join(','))
    .transform((s) => s.split(',').map((n) => n.trim()).filter(Boolean))
    .refine((names) => names.length > 0, 'name at least one gauge')
    .refine((names) => names.every((n) => METRIC_NAME.test(n)), 'each name is a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)'),
  UPSTREAM_CONNECT_TIMEOUT_MS: int(5_000, 1),
  UPSTREAM_HEADERS_TIMEOUT_MS: int(120_000, 1),
  UPSTREAM_IDLE_TIMEOUT_MS: int(60_000, 1),
  REQUEST_TIMEOUT_MS: int(900_000, 1),
  ENDPOINT_WAIT_MS: int(5_000),
  SHUTDOWN_GRACE_MS: int(25_000),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type GatewayEnv = z.infer<typeof gatewayEnvSchema>;

export type EnvResult = { ok: true; env: GatewayEnv } | { ok: false; invalid: Record<string, string> };

/** The settings, or every bad variable with why (one message per variable). */
export function parseEnv(source: Record<string, string | undefined>): EnvResult {
  // An empty variable is an unset one (a manifest's `value: ""`), as the defaults read it.
  const set = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = gatewayEnvSchema.safeParse(set);
  if (parsed.success) return { ok: true, env: parsed.data };
  const invalid: Record<string, string> = {};
  for (const issue of parsed.error.issues) {
    const name = String(issue.path[0] ?? '(environment)');
    invalid[name] = invalid[name] ? `${invalid[name]}; ${issue.message}` : issue.message;
  }
  return { ok: false, invalid };
}
