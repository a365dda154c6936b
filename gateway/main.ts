// The ModelDock inference gateway process: wiring only (gateway/README.md). Tunables come from the
// environment, zod-validated in env.ts; a bad environment exits 1 with one JSON line naming each
// bad variable:
//   PORT (8080)            POST /v1/chat/completions, /v1/completions with x-modeldock-credential
//   METRICS_PORT (9090)    GET /metrics, /healthz, /readyz
//   MAX_BODY_BYTES         request body limit (default 1 MiB → 413)
//   KUBECONFIG             kubeconfig file; unset → the in-cluster ServiceAccount (or ~/.kube/config)
//   INSTANCE               only the EndpointSlices labelled modeldock.io/instance=<INSTANCE>
//   TENANT_NAMESPACE_PREFIX  the controller's (default md-): a slice counts only in its tenant's namespace
//   CREDENTIAL_KEYS_DIR    the mounted Secret of credential keys, re-read every 30 s
//   BALANCE                least-load (default) | round-robin
//   SCRAPE_INTERVAL_MS, METRICS_STALE_MS, LOAD_METRICS   least-load's scrape of pods' /metrics
//   UPSTREAM_CONNECT_TIMEOUT_MS (5 s; a pod not connected by then: the next one is tried),
//   UPSTREAM_HEADERS_TIMEOUT_MS (120 s), UPSTREAM_IDLE_TIMEOUT_MS (60 s), REQUEST_TIMEOUT_MS (15 min)
//   ENDPOINT_WAIT_MS       how long a request waits for its admission's first ready endpoint (5 s; 0: 503 at once)
//   SHUTDOWN_GRACE_MS      on SIGTERM, how long requests in flight may go on (default 25 s)
//   LOG_LEVEL              debug | info | warn | error
import { KubeConfig } from '@kubernetes/client-node';
import { Informer } from '../controller/runtime/informer.ts';
import { clusterPaths, KubeClient } from '../controller/runtime/kube.ts';
import { createLogger } from '../controller/runtime/log.ts';
import { CredentialKeys } from './credential-keys.ts';
import { parseEnv } from './env.ts';
import { createGateway } from './gateway.ts';
import { GatewayMetrics } from './metrics.ts';
import { RouteTable, sliceSelector } from './route-table.ts';
import type { EndpointSlice } from './routes.ts';

const parsed = parseEnv(process.env);
if (!parsed.ok) {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'invalid environment', invalid: parsed.invalid })}\n`);
  process.exit(1);
}
const env = parsed.env;
const log = createLogger({ level: env.LOG_LEVEL }).child({ component: 'gateway' });

const kc = new KubeConfig();
if (env.KUBECONFIG) kc.loadFromFile(env.KUBECONFIG);
else kc.loadFromDefault();
const client = new KubeClient({ kc, timeoutMs: 30_000 });

const slices = new Informer<EndpointSlice>({
  name: 'endpointslices',
  client,
  path: clusterPaths.endpointSlices,
  labelSelector: sliceSelector(env.INSTANCE),
  log,
});
const metrics = new GatewayMetrics({ processMetrics: true });
const routes = new RouteTable({
  slices,
  prefix: env.TENANT_NAMESPACE_PREFIX,
  log,
  onComputed: (table, ignored) => {
    metrics.retain(new Set(table.keys()));
    metrics.ignoredSlices(ignored);
  },
});
const keys = new CredentialKeys({ dir: env.CREDENTIAL_KEYS_DIR, log });

const gateway = createGateway({
  settings: {
    maxBodyBytes: env.MAX_BODY_BYTES,
    connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: env.UPSTREAM_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: env.UPSTREAM_IDLE_TIMEOUT_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    endpointWaitMs: env.ENDPOINT_WAIT_MS,
    policy: env.BALANCE,
    staleMs: env.METRICS_STALE_MS,
    scrapeIntervalMs: env.SCRAPE_INTERVAL_MS,
    loadMetrics: env.LOAD_METRICS,
  },
  routes,
  keys,
  log,
  metrics,
  ready: () => routes.synced,
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info('signal received', { signal });
  await gateway.close(env.SHUTDOWN_GRACE_MS);
  keys.stop();
  await slices.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

const { url, metricsUrl } = await gateway.listen({ port: env.PORT, metricsPort: env.METRICS_PORT });
log.info('listening', { url, metricsUrl, balance: env.BALANCE, instance: env.INSTANCE, keysDir: env.CREDENTIAL_KEYS_DIR });
await keys.start();
gateway.start();
// Resolves after the first list and watch; a failure is retried by the informer (and /readyz waits).
await slices.start();
