// createGateway(options) → the inference server (PORT), the admin server (METRICS_PORT: /metrics,
// /healthz, /readyz), the scraper, and a graceful close. Where routes and keys come from is the
// caller's: main.ts feeds an EndpointSlice informer and the keys folder, the tests fixed ones.
import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../controller/runtime/log.ts';
import { Balancer } from './balancer.ts';
import { endpointLoads } from './endpoint-loads.ts';
import { LoadBook } from './load-book.ts';
import { GatewayMetrics } from './metrics.ts';
import type { Policy } from './picker.ts';
import { createProxy, type KeySource, type ProxySettings, type RouteSource } from './proxy.ts';
import { Scraper } from './scraper.ts';

/** Receiving a whole request (headers and body, at most MAX_BODY_BYTES) takes no longer than this. */
const REQUEST_RECEIVE_TIMEOUT_MS = 60_000;

export interface GatewaySettings extends ProxySettings {
  policy: Policy;
  staleMs: number;
  scrapeIntervalMs: number;
  loadMetrics: readonly string[];
}

export interface GatewayOptions {
  settings: GatewaySettings;
  routes: RouteSource;
  keys: KeySource;
  log: Logger;
  now?: () => number;
  metrics?: GatewayMetrics;
  /** What the scraper GETs pods' /metrics with (default: global fetch). */
  scrapeFetch?: typeof globalThis.fetch;
  /** Besides ≥ 1 key: what else /readyz waits for (the informer's first list). */
  ready?: () => boolean;
}

export interface Gateway {
  server: Server;
  admin: Server;
  metrics: GatewayMetrics;
  book: LoadBook;
  scraper: Scraper;
  listen(o: { port: number; metricsPort: number; host?: string }): Promise<{ url: string; metricsUrl: string }>;
  /** Starts scraping pods (least-load's input). */
  start(): void;
  /** Stops accepting; requests in flight get `graceMs` to finish, then are cut. Called again, the same promise. */
  close(graceMs: number): Promise<void>;
}

export function createGateway(o: GatewayOptions): Gateway {
  const now = o.now ?? Date.now;
  const metrics = o.metrics ?? new GatewayMetrics();
  const book = new LoadBook();
  metrics.readEndpointLoadsFrom(() => endpointLoads(o.routes.table(), book.loads, now(), o.settings.staleMs));
  const agent = new Agent({ keepAlive: true });
  const inflight = new Set<Promise<void>>();
  let draining = false;
  let closing: Promise<void> | undefined;

  const proxy = createProxy({
    routes: o.routes,
    keys: o.keys,
    book,
    balancer: new Balancer(book, { policy: o.settings.policy, staleMs: o.settings.staleMs }, now),
    metrics,
    log: o.log,
    now,
    agent,
    settings: o.settings,
    draining: () => draining,
  });
  const scraper = new Scraper({
    targets: () => [...o.routes.table().values()].flatMap((r) => r.endpoints),
    book,
    metricNames: o.settings.loadMetrics,
    intervalMs: o.settings.scrapeIntervalMs,
    now,
    log: o.log,
    fetch: o.scrapeFetch,
    onResult: (r) => metrics.scraped(r),
  });

  const server = createServer({ requestTimeout: REQUEST_RECEIVE_TIMEOUT_MS }, (req, res) => {
    const done: Promise<void> = proxy(req, res)
      .catch((err: unknown) => o.log.error('request handler failed', { err }))
      .finally(() => inflight.delete(done));
    inflight.add(done);
  });

  const readiness = () => {
    const checks = { keys: o.keys.keys.size > 0, routes: o.ready?.() ?? true, draining };
    return { ready: checks.keys && checks.routes && !draining, checks };
  };
  const admin = createServer((req, res) => void serveAdmin(req, res).catch((err: unknown) => {
    o.log.error('admin request failed', { err });
    res.destroy();
  }));
  async function serveAdmin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
    if (route === 'GET /metrics') {
      const text = await metrics.registry.metrics();
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      return void res.end(text);
    }
    if (route === 'GET /healthz') return json(res, 200, { status: 'ok' });
    if (route === 'GET /readyz') {
      const { ready, checks } = readiness();
      return json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks });
    }
    json(res, 404, { error: 'not found' });
  }

  async function drain(graceMs: number): Promise<void> {
    draining = true;
    o.log.info('shutting down', { inflight: inflight.size, graceMs });
    await scraper.stop();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const grace = new AbortController();
    const settled = settle(inflight).then(() => 'settled' as const);
    const first = await Promise.race([settled, sleep(graceMs, 'grace_over' as const, { signal: grace.signal }).catch(() => 'settled' as const)]);
    grace.abort();
    if (first === 'grace_over') {
      o.log.warn('shutdown grace over; cutting the requests still in flight', { inflight: inflight.size });
      // Their clients' connections close: each request aborts its pod's request and logs itself.
      server.closeAllConnections();
      await settle(inflight);
    }
    server.closeAllConnections();
    await closed;
    agent.destroy();
    await new Promise<void>((resolve) => {
      admin.close(() => resolve());
      admin.closeAllConnections();
    });
    o.log.info('closed');
  }

  return {
    server,
    admin,
    metrics,
    book,
    scraper,
    async listen({ port, metricsPort, host = '0.0.0.0' }) {
      const [main, side] = await Promise.all([listenOn(server, port, host), listenOn(admin, metricsPort, host)]);
      return { url: main, metricsUrl: side };
    },
    start: () => scraper.start(),
    close: (graceMs) => (closing ??= drain(graceMs)),
  };
}

async function settle(set: Set<Promise<void>>): Promise<void> {
  while (set.size > 0) await Promise.allSettled([...set]);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function listenOn(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      resolve(`http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`);
    });
  });
}
