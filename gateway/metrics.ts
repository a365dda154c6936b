// The gateway's Prometheus metrics, on a registry of its own (tests run several gateways in one
// process). Per-request series carry the tenant and the admission; an admission's series are
// removed once its route is gone and its last request ended, so a deleted admission does not stay
// in /metrics forever. A request that reached no route (401, 404, 503 for an admission without
// one) is counted under admission "".
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CredentialRejection } from '../schema/gateway-credential.ts';
import type { EndpointLoadSample } from './endpoint-loads.ts';
import type { PickSource } from './picker.ts';
import type { IgnoreReason } from './routes.ts';
import type { ScrapeResult } from './scraper.ts';

const TTFT_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const TPS_BUCKETS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000];

export type RejectionReason = CredentialRejection | 'missing';
export interface RequestLabels {
  tenant: string;
  admission: string;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'modeldock_gateway_requests_total',
    help: 'Inference requests by tenant, admission and the status the client got (499: it left before the status).',
    labelNames: ['tenant', 'admission', 'code'] as const,
    registers: [this.registry],
  });
  readonly #ttft = new Histogram({
    name: 'modeldock_gateway_time_to_first_token_seconds',
    help: 'From the gateway receiving a request to the first streamed event that carries content.',
    labelNames: ['tenant', 'admission'] as const,
    buckets: TTFT_BUCKETS,
    registers: [this.registry],
  });
  readonly #tokens = new Counter({
    name: 'modeldock_gateway_tokens_total',
    help: 'Streamed events that carry content (one per token for OpenAI-style streams).',
    labelNames: ['tenant', 'admission'] as const,
    registers: [this.registry],
  });
  readonly #tps = new Histogram({
    name: 'modeldock_gateway_tokens_per_second',
    help: 'Per streamed request with two tokens or more: (tokens - 1) / seconds from the first to the last.',
    labelNames: ['tenant', 'admission'] as const,
    buckets: TPS_BUCKETS,
    registers: [this.registry],
  });
  readonly #inflight = new Gauge({
    name: 'modeldock_gateway_inflight',
    help: 'Requests being forwarded now.',
    labelNames: ['tenant', 'admission'] as const,
    registers: [this.registry],
  });
  readonly #rejections = new Counter({
    name: 'modeldock_gateway_credential_rejections_total',
    help: 'Requests refused with 401, by why the credential was refused.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly #picks = new Counter({
    name: 'modeldock_gateway_picks_total',
    help: 'Endpoint choices by what decided them: a fresh scrape (metrics), the in-flight count alone, or the rotation (round_robin).',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly #connectErrors = new Counter({
    name: 'modeldock_gateway_upstream_connect_errors_total',
    help: 'Attempts that could not connect to the chosen pod (the request then tried the next one).',
    registers: [this.registry],
  });
  readonly #scrapes = new Counter({
    name: 'modeldock_gateway_scrapes_total',
    help: 'Scrapes of pods\' /metrics by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly #ignored = new Gauge({
    name: 'modeldock_gateway_ignored_endpointslices',
    help: 'EndpointSlices not routed to, by why (a foreign namespace, missing labels, tenants in conflict).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  // Set at each scrape from what the picker sees then (endpoint-loads.ts), never kept between
  // scrapes: an endpoint that left its route has no series to remove.
  readonly #endpointLoad = new Gauge({
    name: 'modeldock_gateway_endpoint_load',
    help: 'Each routed endpoint\'s load as the picker reads it now: the pod\'s scraped gauges corrected by this gateway\'s in-flight change since, or its in-flight count when the scrape is stale.',
    labelNames: ['tenant', 'admission', 'pod', 'address'] as const,
    registers: [this.registry],
    collect: () => {
      this.#endpointLoad.reset();
      for (const s of this.#readEndpointLoads()) this.#endpointLoad.set({ tenant: s.tenant, admission: s.admission, pod: s.pod, address: s.address }, s.load);
    },
  });
  #readEndpointLoads: () => Iterable<EndpointLoadSample> = () => [];
  /** Every admission with series: its tenant, the codes counted, its requests in flight. */
  readonly #series = new Map<string, { tenant: string; codes: Set<string>; inflight: number }>();
  /** The admissions with a route, as last told; undefined before the first table. */
  #live: ReadonlySet<string> | undefined;

  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  requestStarted(l: RequestLabels): void {
    this.#inflight.inc({ ...l });
    this.#entry(l).inflight += 1;
  }

  requestEnded(l: RequestLabels, code: number, o: { started: boolean; ttftSeconds?: number; tokens: number; tokensPerSecond?: number }): void {
    const entry = this.#entry(l);
    if (o.started) {
      this.#inflight.dec({ ...l });
      entry.inflight -= 1;
    }
    entry.codes.add(String(code));
    this.#requests.inc({ ...l, code: String(code) });
    if (o.ttftSeconds !== undefined) this.#ttft.observe({ ...l }, o.ttftSeconds);
    if (o.tokens > 0) this.#tokens.inc({ ...l }, o.tokens);
    if (o.tokensPerSecond !== undefined) this.#tps.observe({ ...l }, o.tokensPerSecond);
    if (this.#live && !this.#live.has(l.admission)) this.#dropIfIdle(l.admission);
  }

  rejected(reason: RejectionReason): void {
    this.#rejections.inc({ reason });
  }

  picked(source: PickSource): void {
    this.#picks.inc({ source });
  }

  connectFailed(): void {
    this.#connectErrors.inc();
  }

  scraped(result: ScrapeResult): void {
    this.#scrapes.inc({ result });
  }

  ignoredSlices(counts: Readonly<Record<IgnoreReason, number>>): void {
    for (const [reason, n] of Object.entries(counts)) this.#ignored.set({ reason }, n);
  }

  /** Where modeldock_gateway_endpoint_load reads its samples, at every scrape. */
  readEndpointLoadsFrom(read: () => Iterable<EndpointLoadSample>): void {
    this.#readEndpointLoads = read;
  }

  /** The admissions that have a route now: the series of every other one go once it is idle. */
  retain(live: ReadonlySet<string>): void {
    this.#live = live;
    for (const admission of [...this.#series.keys()]) if (!live.has(admission)) this.#dropIfIdle(admission);
  }

  #entry(l: RequestLabels) {
    let entry = this.#series.get(l.admission);
    if (!entry) {
      entry = { tenant: l.tenant, codes: new Set(), inflight: 0 };
      this.#series.set(l.admission, entry);
    }
    return entry;
  }

  #dropIfIdle(admission: string): void {
    const entry = this.#series.get(admission);
    // Admission "" holds what reached no route: its series stay (one per tenant at most).
    if (!entry || entry.inflight > 0 || admission === '') return;
    const l = { tenant: entry.tenant, admission };
    for (const code of entry.codes) this.#requests.remove({ ...l, code });
    this.#ttft.remove(l);
    this.#tokens.remove(l);
    this.#tps.remove(l);
    this.#inflight.remove(l);
    this.#series.delete(admission);
  }
}
