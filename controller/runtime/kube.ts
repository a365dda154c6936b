// A small JSON client for the Kubernetes API, authenticated by client-node's KubeConfig.
// Why not the generated clients: they return class instances with Date objects (watch events
// are plain JSON), throw ApiException with a string body, and default PATCH to json-patch.
// This client returns the API server's plain JSON everywhere, throws KubeApiError with the
// parsed v1.Status, and is the one seam where writes are rate-limited and counted.
// It uses undici's fetch because client-node's TLS dispatcher is an undici 8 Agent.
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { GROUP, PLURAL, VERSION } from '../../schema/model-service.ts';
import { KubeApiError, type KubeStatus } from './errors.ts';
import type { Metrics } from './metrics.ts';
import type { Priority, TokenBucket } from './rate-limit.ts';
import type { ServerClock } from './server-clock.ts';

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; dispatcher?: Dispatcher; signal?: AbortSignal },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;

export interface KubeClientOptions {
  kc: KubeConfig;
  /** Applied to writes only (POST/PUT/PATCH/DELETE). */
  limiter?: TokenBucket;
  /** This client's place in the limiter's queue (default normal; the ledger's deliveries are high). */
  priority?: Priority;
  /** Applied to reads (GET), when given: a client whose live reads must stay bounded. */
  readLimiter?: TokenBucket;
  metrics?: Metrics;
  fieldManager?: string;
  fetch?: FetchLike;
  /** Deadline of one request (default 30 s). */
  timeoutMs?: number;
  /** Aborts every request in flight and every later one (see withSignal). */
  signal?: AbortSignal;
  /** Fed the Date header of every response: the API server's clock (server-clock.ts). */
  serverClock?: ServerClock;
}

export interface ListResult<T> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
}

type Query = Record<string, string | number | boolean | undefined>;

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const VERB: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

export class KubeClient {
  readonly kc: KubeConfig;
  readonly #opts: KubeClientOptions;
  readonly #fetch: FetchLike;
  /** Shared with every withSignal() view: TLS settings are per kubeconfig, so are connections. */
  readonly #conn: { dispatcher?: Dispatcher };

  constructor(opts: KubeClientOptions, conn: { dispatcher?: Dispatcher } = {}) {
    this.kc = opts.kc;
    this.#opts = opts;
    this.#fetch = opts.fetch ?? (undiciFetch as unknown as FetchLike);
    this.#conn = conn;
  }

  /** The same client (limiter, metrics, connections); its requests are also aborted when `signal` aborts. */
  withSignal(signal: AbortSignal): KubeClient {
    const combined = this.#opts.signal ? AbortSignal.any([this.#opts.signal, signal]) : signal;
    return new KubeClient({ ...this.#opts, signal: combined }, this.#conn);
  }

  async request<T>(method: string, path: string, opts: { query?: Query; body?: unknown; contentType?: string } = {}): Promise<T> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new Error('kubeconfig has no current cluster');
    const url = new URL(server + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    if (WRITE.has(method) && method !== 'DELETE' && this.#opts.fieldManager) url.searchParams.set('fieldManager', this.#opts.fieldManager);

    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.kc.applySecurityAuthentication(ctx);
    this.#conn.dispatcher ??= ctx.getDispatcher() as Dispatcher | undefined;
    const headers: Record<string, string> = { ...ctx.getHeaders(), accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';

    const signal = this.#opts.signal;
    signal?.throwIfAborted();
    if (method === 'GET' && this.#opts.readLimiter) await untilAborted(this.#opts.readLimiter.take(), signal);
    if (WRITE.has(method)) {
      if (this.#opts.limiter) await untilAborted(this.#opts.limiter.take(this.#opts.priority), signal);
      this.#opts.metrics?.kubeWrites.inc({ resource: resourceOf(path, method), verb: VERB[method] ?? method });
    }
    let res: Awaited<ReturnType<FetchLike>>;
    const clock = this.#opts.serverClock;
    const sentAt = clock?.localMs() ?? 0;
    try {
      res = await this.#fetch(url.toString(), {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        dispatcher: this.#conn.dispatcher,
        signal: signal ? AbortSignal.any([AbortSignal.timeout(this.#opts.timeoutMs ?? 30_000), signal]) : AbortSignal.timeout(this.#opts.timeoutMs ?? 30_000),
      });
    } catch (err) {
      this.#opts.metrics?.restRequests.inc({ code: '<error>', method, host: url.host });
      throw err;
    }
    clock?.observe(res.headers.get('date'), sentAt, clock.localMs());
    this.#opts.metrics?.restRequests.inc({ code: String(res.status), method, host: url.host });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      let status: KubeStatus | undefined;
      try {
        status = JSON.parse(text) as KubeStatus;
      } catch {
        status = { message: text.slice(0, 200) };
      }
      const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
      throw new KubeApiError(method, path, res.status, status, Number.isFinite(retryAfter) ? retryAfter : undefined);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** GET that answers undefined on 404. */
  async getOrUndefined<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Lists every page; the result carries the resourceVersion of the first page (a consistent snapshot). */
  async list<T>(path: string, query: Query = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.request<ListResult<T>>('GET', path, { query: { ...query, limit: 500, continue: cont } });
      resourceVersion ??= page.metadata?.resourceVersion;
      items.push(...(page.items ?? []));
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return { metadata: { resourceVersion }, items };
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  replace<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  /** RFC 7386 JSON merge patch. Put metadata.resourceVersion in the body for optimistic locking. */
  mergePatch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body, contentType: 'application/merge-patch+json' });
  }

  delete<T>(path: string, opts: DeleteOptions = {}): Promise<T> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...opts };
    return this.request<T>('DELETE', path, { body });
  }
}

/** `p`, or a rejection as soon as `signal` aborts (what `p` does later is ignored). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** `deployments`, `services`, `modelservices/status`, … from an API path (for metrics). */
export function resourceOf(path: string, method: string): string {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  const ns = parts.indexOf('namespaces');
  const rest = ns >= 0 ? parts.slice(ns + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  const [resource = 'unknown', , sub] = rest;
  if (method === 'POST' && rest.length === 1) return resource;
  return sub ? `${resource}/${sub}` : resource;
}

// ---------------------------------------------------------------- paths

export const paths = {
  deployments: (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`,
  deployment: (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`,
  services: (ns: string) => `/api/v1/namespaces/${ns}/services`,
  service: (ns: string, name: string) => `/api/v1/namespaces/${ns}/services/${name}`,
  pods: (ns: string) => `/api/v1/namespaces/${ns}/pods`,
  endpointSlices: (ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
  leases: (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
  lease: (ns: string, name: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`,
  events: (ns: string) => `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
  modelServices: (ns: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}`,
  modelService: (ns: string, name: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}/${name}`,
  namespaces: () => '/api/v1/namespaces',
  namespace: (name: string) => `/api/v1/namespaces/${name}`,
  resourceQuotas: (ns: string) => `/api/v1/namespaces/${ns}/resourcequotas`,
  networkPolicies: (ns: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
};

/** Collection paths across every namespace (the cache's cluster-wide informers). */
export const clusterPaths = {
  modelServices: `/apis/${GROUP}/${VERSION}/${PLURAL}`,
  deployments: '/apis/apps/v1/deployments',
  services: '/api/v1/services',
  pods: '/api/v1/pods',
  endpointSlices: '/apis/discovery.k8s.io/v1/endpointslices',
  namespaces: '/api/v1/namespaces',
  resourceQuotas: '/api/v1/resourcequotas',
  networkPolicies: '/apis/networking.k8s.io/v1/networkpolicies',
} as const;
