// createMockServer(options) → { server, listen, close }: routing, readiness, graceful drain.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { serveCompletion, type CompletionDeps, type Log } from './completions.ts';
import { HttpError, ShuttingDownError, sendError, sendJson } from './http-io.ts';
import { createMetrics, type MockMetrics } from './metrics.ts';
import { openAiError } from './openai.ts';
import { modelLoaded, readiness } from './readiness.ts';
import { modelList } from './responses.ts';
import { SlotScheduler } from './slots.ts';
import { realSleep, type Sleep } from './token-loop.ts';

export type MockServerConfig = {
  modelName: string;
  slots: number;
  queueLimit: number;
  tokenDelayMs: number;
  warmupMs: number;
  /** /readyz never answers 200 and completions get 503 model_loading (MOCK_NEVER_READY). */
  neverReady: boolean;
  /** close(): unready but serving this long before the drain begins (MOCK_SHUTDOWN_DELAY_S). */
  shutdownDelayMs: number;
  shutdownGraceMs: number;
  retryAfterSeconds: number;
  maxBodyBytes: number;
};

export const mockServerDefaults: Readonly<MockServerConfig> = Object.freeze({
  modelName: 'mock-model',
  slots: 2,
  queueLimit: 32,
  tokenDelayMs: 20,
  warmupMs: 1000,
  neverReady: false,
  shutdownDelayMs: 0,
  shutdownGraceMs: 10_000,
  retryAfterSeconds: 1,
  maxBodyBytes: 1 << 20,
});

export type MockServerOptions = Partial<MockServerConfig> & {
  /** Epoch milliseconds; drives warm-up, queue wait, TTFT and `created`. */
  now?: () => number;
  sleep?: Sleep;
  /** Waits out the shutdown delay (default: a timer). */
  pauseBeforeDrain?: (ms: number) => Promise<void>;
  log?: Log;
  /** Also export prom-client's process_* / nodejs_* metrics. */
  defaultMetrics?: boolean;
};

export type MockServer = {
  server: Server;
  metrics: MockMetrics;
  scheduler: SlotScheduler;
  listen(port?: number, host?: string): Promise<{ port: number; host: string; url: string }>;
  /**
   * Unready at once; after `delayMs` (still listening, queued and running requests go on, new
   * completions get 503) stop accepting, 503 the queue, let running requests finish within
   * `graceMs`. Called again, returns the same promise.
   */
  close(graceMs?: number, delayMs?: number): Promise<void>;
};

const jsonLog: Log = (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));

export function createMockServer(options: MockServerOptions = {}): MockServer {
  const config = { ...mockServerDefaults, ...options };
  const { now = Date.now, sleep = realSleep, log = jsonLog, pauseBeforeDrain = (ms) => delay(ms) } = options;
  const startedAt = now();
  const scheduler = new SlotScheduler({ slots: config.slots, queueLimit: config.queueLimit, now });
  const metrics = createMetrics(scheduler, { defaultMetrics: options.defaultMetrics ?? false });
  const shutdown = new AbortController();
  const inflight = new Set<Promise<void>>();
  let draining = false;
  let closing: Promise<void> | undefined;
  let ids = 0;
  let requests = 0;
  const readinessState = () => ({ draining, neverReady: config.neverReady, uptimeMs: now() - startedAt, warmupMs: config.warmupMs });

  const deps: CompletionDeps = {
    ...config,
    scheduler,
    metrics,
    now,
    sleep,
    log,
    nextId: () => ++ids,
    isReady: () => modelLoaded(readinessState()),
    isDraining: () => draining,
    shutdownSignal: shutdown.signal,
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const reqId = headerValue(req, 'x-request-id') ?? `req-${++requests}`;
    switch (`${req.method} ${path}`) {
      case 'GET /healthz':
        return sendJson(res, 200, { status: 'ok' });
      case 'GET /readyz': {
        const status = readiness(readinessState());
        return sendJson(res, status === 'ready' ? 200 : 503, { status });
      }
      case 'GET /metrics': {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        return void res.end(text);
      }
      case 'GET /v1/models':
        return sendJson(res, 200, modelList(config.modelName, Math.floor(startedAt / 1000)));
      case 'POST /v1/chat/completions':
        return serveCompletion(deps, 'chat_completions', req, res, reqId);
      case 'POST /v1/completions':
        return serveCompletion(deps, 'completions', req, res, reqId);
      default:
        return sendError(res, new HttpError(404, openAiError(`no route for ${req.method} ${path}`, 'invalid_request_error'), 'invalid'));
    }
  }

  const server = createServer((req, res) => {
    const done = route(req, res)
      .catch((error: unknown) => {
        log({ msg: 'unhandled_error', error: String(error) });
        sendError(res, new HttpError(500, openAiError('internal error', 'server_error'), 'error'));
      })
      .finally(() => inflight.delete(done));
    inflight.add(done);
  });

  async function listen(port = 0, host = '127.0.0.1') {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return { port: address.port, host: address.address, url: `http://${urlHost}:${address.port}` };
  }

  async function settleInflight(): Promise<void> {
    while (inflight.size > 0) await Promise.allSettled([...inflight]);
  }

  async function drain(graceMs: number, delayMs: number): Promise<void> {
    draining = true;
    if (delayMs > 0) {
      log({ msg: 'shutdown_delay', delayMs, active: scheduler.busy, queued: scheduler.queued });
      await pauseBeforeDrain(delayMs);
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const rejected = scheduler.rejectQueued(new ShuttingDownError('server is shutting down'));
    log({ msg: 'draining', active: scheduler.busy, rejectedQueued: rejected, graceMs });
    const timer = new AbortController();
    const graceOver = delay(graceMs, 'timeout' as const, { signal: timer.signal }).catch(() => 'settled' as const);
    const first = await Promise.race([settleInflight().then(() => 'settled' as const), graceOver]);
    timer.abort();
    if (first === 'timeout') {
      log({ msg: 'grace_period_over', active: scheduler.busy });
      shutdown.abort(new ShuttingDownError('grace period over'));
      await settleInflight();
    }
    server.closeAllConnections();
    await closed;
    log({ msg: 'closed' });
  }

  return {
    server,
    metrics,
    scheduler,
    listen,
    close: (graceMs = config.shutdownGraceMs, delayMs = config.shutdownDelayMs) =>
      (closing ??= server.listening ? drain(graceMs, delayMs) : Promise.resolve()),
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
