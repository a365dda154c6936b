// Prometheus metrics with the names operators already know from controller-runtime and
// client-go, in a registry per Manager (so tests can run several in one process), plus the
// small HTTP server for /metrics (authenticated and authorized by the API server, see
// metrics-auth.ts), /healthz and /readyz (open).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricsAuthorizer } from './metrics-auth.ts';
import type { ReadyResult } from './ready-check.ts';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class Metrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller and result (success, error, requeue, requeue_after).',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller.',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly terminalErrors = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors (not retried) per controller.',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller.',
    labelNames: ['controller'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller.',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of the workqueue.',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by the workqueue (collapsed duplicates are not counted).',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of rate-limited retries handled by the workqueue.',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in the workqueue before being requested.',
    labelNames: ['name'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from the workqueue takes.',
    labelNames: ['name'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help: 'Whether this process is currently the leader (1) or not (0) of the named lease.',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly restRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests to the API server, partitioned by status code, method and host.',
    labelNames: ['code', 'method', 'host'] as const,
    registers: [this.registry],
  });
  readonly kubeWrites = new Counter({
    name: 'modeldock_kube_writes_total',
    help: 'API writes (create, update, patch, delete) sent by this process, per resource and verb.',
    labelNames: ['resource', 'verb'] as const,
    registers: [this.registry],
  });
  readonly informerRestarts = new Counter({
    name: 'modeldock_informer_restarts_total',
    help: 'Informer restarts after an error or a stale watch, per informer and cause.',
    labelNames: ['informer', 'cause'] as const,
    registers: [this.registry],
  });
  readonly informerSynced = new Gauge({
    name: 'modeldock_informer_synced',
    help: 'Whether the informer finished its initial list (1) or not (0).',
    labelNames: ['informer'] as const,
    registers: [this.registry],
  });

  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }
}

export interface HealthServerOptions {
  port: number;
  host?: string;
  metrics: Metrics;
  /** /readyz answers 200 only when this says ok (caches synced, dependencies answering). */
  ready: () => ReadyResult | Promise<ReadyResult>;
  /** Guards /metrics (TokenReview + SubjectAccessReview); omitted → /metrics is open (tests of the runtime only). */
  auth?: MetricsAuthorizer;
  /** Told about denied or failed /metrics requests and failed readiness (no secrets). */
  onProblem?: (level: 'debug' | 'warn', msg: string, fields: Record<string, unknown>) => void;
}

/** Serves /metrics, /healthz and /readyz. Resolves once listening; `close()` stops it. */
export async function startHealthServer({ port, host = '0.0.0.0', metrics, ready, auth, onProblem }: HealthServerOptions): Promise<Server> {
  const text = (res: ServerResponse, status: number, body: string) => res.writeHead(status, { 'content-type': 'text/plain' }).end(`${body}\n`);
  const serveMetrics = async (req: IncomingMessage, res: ServerResponse) => {
    if (auth) {
      const d = await auth.check(req.headers.authorization, '/metrics');
      if (d.status !== 200) {
        onProblem?.('warn', 'metrics request refused', { status: d.status, reason: d.reason });
        if (d.status === 401) res.setHeader('www-authenticate', 'Bearer');
        return text(res, d.status, d.status === 500 ? 'Internal Server Error' : d.status === 401 ? 'Unauthorized' : 'Forbidden');
      }
    }
    const body = await metrics.registry.metrics();
    res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body);
  };
  const serveReady = async (res: ServerResponse) => {
    const r = await ready();
    if (!r.ok) onProblem?.('debug', 'not ready', { reason: r.reason, detail: r.detail });
    text(res, r.ok ? 200 : 503, r.ok ? 'ok' : (r.reason ?? 'not ready'));
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const fail = (err: unknown) => {
      onProblem?.('warn', 'health server error', { path, err: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) text(res, 500, 'Internal Server Error');
    };
    if (path === '/metrics') serveMetrics(req, res).catch(fail);
    else if (path === '/healthz') text(res, 200, 'ok');
    else if (path === '/readyz') serveReady(res).catch(fail);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
