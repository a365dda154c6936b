// The inference handler: credential → route (waiting for a ready endpoint) → body → pick →
// forward → relay, one JSON log line and the metrics at the end of every request. The admission
// comes from the credential, never from the path or the body; the body goes to the pod byte for
// byte, with only content-type, accept and the edge's request id beside it (never the credential).
import type { Agent, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../controller/runtime/log.ts';
import { CREDENTIAL_HEADER, verifyCredential } from '../schema/gateway-credential.ts';
import type { Balancer } from './balancer.ts';
import { waitable, waitForEndpoint } from './endpoint-wait.ts';
import { answerFor, GatewayError, statusOf, type GatewayErrorCode } from './errors.ts';
import type { LoadBook } from './load-book.ts';
import type { GatewayMetrics } from './metrics.ts';
import { relay, type RelayEnd } from './relay.ts';
import { endpointKey, resolveRoute, type Route } from './routes.ts';
import { SseMeter } from './sse-meter.ts';
import { attempt } from './upstream.ts';

const INFERENCE_PATHS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/completions']);
/** The status counted for a client that left before it got one (nginx's). */
const CLIENT_CLOSED = 499;

/** The routes now (an informer's table in the cluster, a fixed one in tests). */
export interface RouteSource {
  table(): ReadonlyMap<string, Route>;
  /**
   * Resolves at the table's next change, or at once when `signal` aborts; a request waiting for a
   * ready endpoint re-reads the table then. Without it, a waiting request re-reads it every ENDPOINT_POLL_MS.
   */
  changed?(signal: AbortSignal): Promise<void>;
}
export interface KeySource {
  readonly keys: ReadonlyMap<string, string>;
}

export interface ProxySettings {
  maxBodyBytes: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  requestTimeoutMs: number;
  /** How long a request waits for its admission's first ready endpoint (ENDPOINT_WAIT_MS; 0: not at all). */
  endpointWaitMs: number;
}

export interface ProxyDeps {
  routes: RouteSource;
  keys: KeySource;
  book: LoadBook;
  balancer: Balancer;
  metrics: GatewayMetrics;
  log: Logger;
  now: () => number;
  agent: Agent;
  settings: ProxySettings;
  draining: () => boolean;
}

export type Outcome = RelayEnd | 'rejected';

/** What the log line and the metrics say of one request. */
interface RequestRecord {
  requestId?: string;
  tenant: string;
  admission: string;
  /** The admission has a route: its own series (else admission ""). */
  routed: boolean;
  pod?: string;
  status: number;
  outcome: Outcome;
  /** Why the credential was refused (log only). */
  reason?: string;
  /** How long the request waited for a ready endpoint, when it had to. */
  endpointWaitMs?: number;
  forwarded: boolean;
}

class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

export function createProxy(deps: ProxyDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { metrics, log, now, settings } = deps;

  return async function proxy(req, res) {
    const receivedAt = now();
    const clientGone = goneSignal(res);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), settings.requestTimeoutMs);
    const meter = new SseMeter(now);
    const rec: RequestRecord = { tenant: '', admission: '', routed: false, status: 0, outcome: 'rejected', forwarded: false };
    try {
      await serve(req, res, rec, meter, clientGone, deadline.signal);
    } catch (err) {
      if (err instanceof ClientGoneError || clientGone.aborted) {
        rec.status = CLIENT_CLOSED;
        rec.outcome = 'client_closed';
      } else {
        const code: GatewayErrorCode = err instanceof GatewayError ? err.code : 'internal_error';
        if (code === 'internal_error') log.error('request failed', { requestId: rec.requestId, err });
        rec.status = statusOf(code);
        rec.outcome = outcomeOf(code);
        send(res, code);
      }
    } finally {
      clearTimeout(timer);
      finish(rec, meter, receivedAt);
    }
  };

  async function serve(req: IncomingMessage, res: ServerResponse, rec: RequestRecord, meter: SseMeter, clientGone: AbortSignal, deadline: AbortSignal): Promise<void> {
    if (deps.draining()) throw new GatewayError('shutting_down');
    if (!INFERENCE_PATHS.has((req.url ?? '').split('?')[0]!)) throw new GatewayError('not_found');
    if (req.method !== 'POST') throw new GatewayError('method_not_allowed');

    const token = req.headers[CREDENTIAL_HEADER];
    const verified = typeof token === 'string' && token !== '' ? await verifyCredential(deps.keys.keys, token, now()) : ({ ok: false, reason: 'missing' } as const);
    if (!verified.ok) {
      rec.reason = verified.reason;
      metrics.rejected(verified.reason);
      throw new GatewayError('unauthorized');
    }
    const { claims } = verified;
    Object.assign(rec, { requestId: claims.requestId, tenant: claims.tenant, admission: claims.admission });

    const route = await routeFor(claims.tenant, claims.admission, rec, clientGone, deadline);
    const body = await readBody(req, settings.maxBodyBytes);

    const headers: Record<string, string> = { 'x-request-id': claims.requestId, 'content-length': String(body.length) };
    for (const name of ['content-type', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    rec.forwarded = true;
    metrics.requestStarted(labels(rec));
    const tried = new Set<string>();
    for (;;) {
      const picked = deps.balancer.choose(route, route.endpoints.filter((e) => !tried.has(endpointKey(e))));
      if (!picked) throw new GatewayError('upstream_unreachable');
      const key = endpointKey(picked.endpoint);
      tried.add(key);
      metrics.picked(picked.source);
      rec.pod = picked.endpoint.pod;
      const release = deps.book.acquire(key);
      try {
        const result = await attempt({
          agent: deps.agent,
          endpoint: picked.endpoint,
          path: req.url!,
          headers,
          body,
          connectTimeoutMs: settings.connectTimeoutMs,
          headersTimeoutMs: settings.headersTimeoutMs,
          signal: AbortSignal.any([clientGone, deadline]),
        });
        switch (result.kind) {
          case 'connect_error':
            metrics.connectFailed();
            log.warn('upstream connect failed; trying the next pod', { requestId: claims.requestId, pod: picked.endpoint.pod, err: result.err });
            continue;
          case 'headers_timeout':
            throw new GatewayError('upstream_timeout');
          case 'aborted':
            throw clientGone.aborted ? new ClientGoneError() : new GatewayError('upstream_timeout');
          case 'error':
            log.warn('upstream failed before answering', { requestId: claims.requestId, pod: picked.endpoint.pod, err: result.err });
            throw new GatewayError('upstream_error');
        }
        rec.status = result.res.statusCode ?? 0;
        rec.outcome = await relay({
          upstreamReq: result.req,
          upstreamRes: result.res,
          res,
          headers: { 'x-request-id': claims.requestId },
          meter,
          idleTimeoutMs: settings.idleTimeoutMs,
          clientGone,
          deadline,
        });
        return;
      } finally {
        release();
      }
    }
  }

  /** The admission's route with a ready endpoint, waiting up to ENDPOINT_WAIT_MS for one to appear. */
  async function routeFor(tenant: string, admission: string, rec: RequestRecord, clientGone: AbortSignal, deadline: AbortSignal): Promise<Route> {
    const resolve = () => resolveRoute(deps.routes.table(), tenant, admission);
    let resolution = resolve();
    if (waitable(resolution) && settings.endpointWaitMs > 0) {
      const started = now();
      resolution = await waitForEndpoint({
        resolve,
        changed: deps.routes.changed?.bind(deps.routes),
        waitMs: settings.endpointWaitMs,
        signal: AbortSignal.any([clientGone, deadline]),
      });
      rec.endpointWaitMs = now() - started;
    }
    if (resolution.kind === 'not_found') throw new GatewayError('not_found');
    // An admission without a route at all is counted under admission "": its series would go at once.
    rec.routed = resolution.kind !== 'unknown';
    if (clientGone.aborted) throw new ClientGoneError();
    // Unknown too: the edge vouched for the admission, so it is one whose endpoint is not here yet.
    if (resolution.kind !== 'route') throw new GatewayError('no_ready_endpoint');
    return resolution.route;
  }

  function finish(rec: RequestRecord, meter: SseMeter, receivedAt: number): void {
    const ttftMs = meter.firstTokenAt === undefined ? undefined : meter.firstTokenAt - receivedAt;
    const tokensPerSecond = meter.tokensPerSecond();
    metrics.requestEnded(labels(rec), rec.status, {
      started: rec.forwarded,
      ttftSeconds: ttftMs === undefined ? undefined : ttftMs / 1000,
      tokens: meter.tokens,
      tokensPerSecond,
    });
    log.info('request', {
      requestId: rec.requestId,
      tenant: rec.tenant || undefined,
      admission: rec.admission || undefined,
      pod: rec.pod,
      status: rec.status,
      ttftMs,
      tokens: meter.tokens,
      durationMs: now() - receivedAt,
      outcome: rec.outcome,
      reason: rec.reason,
      endpointWaitMs: rec.endpointWaitMs,
    });
  }
}

const labels = (rec: RequestRecord) => ({ tenant: rec.tenant, admission: rec.routed ? rec.admission : '' });

function outcomeOf(code: GatewayErrorCode): Outcome {
  if (code === 'upstream_timeout') return 'timeout';
  if (code === 'upstream_unreachable' || code === 'upstream_error') return 'upstream_error';
  return 'rejected';
}

function send(res: ServerResponse, code: GatewayErrorCode): void {
  if (res.headersSent) return void res.destroy();
  const a = answerFor(code);
  res.writeHead(a.status, a.headers);
  res.end(a.body);
}

/** Aborts when the connection closes before the response finished (the client left). */
function goneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/** The whole body (it is sent again if the first pod cannot be reached), at most `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > max) throw new GatewayError('body_too_large');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw new GatewayError('body_too_large');
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new ClientGoneError('the client left while sending its request'); // the only way reading fails
  }
  return Buffer.concat(chunks);
}
