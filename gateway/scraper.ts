// Every SCRAPE_INTERVAL_MS, GET /metrics of every endpoint of every route, each with a deadline,
// and write the summed load gauges into the load book (least-load's input). A round waits for its
// slowest scrape (at most the deadline), so rounds never overlap and a hung pod costs one deadline
// per round. Endpoints that left every route are forgotten at the start of the next round.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../controller/runtime/log.ts';
import type { LoadBook } from './load-book.ts';
import { sumOfMetrics } from './prom-gauges.ts';
import { endpointKey, type Endpoint } from './routes.ts';

/** Longest wait for one pod's /metrics (it is re-read every round anyway). */
const SCRAPE_TIMEOUT_MS = 1_000;
/** A pod's /metrics is the tenant's program: more than this is not read (vLLM's is ~100 KiB). */
const SCRAPE_MAX_BYTES = 4 << 20;

export type ScrapeResult = 'ok' | 'error';

export interface ScraperOptions {
  /** Every endpoint of every route now (duplicates are scraped once). */
  targets: () => Iterable<Endpoint>;
  book: LoadBook;
  /** LOAD_METRICS: the gauges summed as a pod's load. */
  metricNames: readonly string[];
  intervalMs: number;
  now: () => number;
  log: Logger;
  fetch?: typeof globalThis.fetch;
  timeoutMs?: number;
  maxBytes?: number;
  /** Told the result of every scrape (the gateway's scrape counter). */
  onResult?: (result: ScrapeResult) => void;
}

class ScrapeError extends Error {
  override readonly name = 'ScrapeError';
}

export class Scraper {
  readonly #opts: ScraperOptions;
  readonly #names: ReadonlySet<string>;
  readonly #fetch: typeof globalThis.fetch;
  /** Endpoints whose last scrape failed: a failure is logged when it starts and when it ends, not every round. */
  readonly #failing = new Set<string>();
  #stop: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(opts: ScraperOptions) {
    this.#opts = opts;
    this.#names = new Set(opts.metricNames);
    this.#fetch = opts.fetch ?? globalThis.fetch;
  }

  start(): void {
    if (this.#loop) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#loop = this.#run(stop.signal);
  }

  async stop(): Promise<void> {
    this.#stop?.abort();
    await this.#loop;
    this.#loop = undefined;
  }

  /** One round: forget the endpoints that left, then scrape every one still there. */
  async scrapeOnce(signal?: AbortSignal): Promise<void> {
    const targets = new Map<string, Endpoint>();
    for (const e of this.#opts.targets()) targets.set(endpointKey(e), e);
    const keys = new Set(targets.keys());
    this.#opts.book.retain(keys);
    for (const key of this.#failing) if (!keys.has(key)) this.#failing.delete(key);
    await Promise.all([...targets].map(([key, e]) => this.#scrape(key, e, signal)));
  }

  async #run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.scrapeOnce(signal);
      await sleep(this.#opts.intervalMs, undefined, { signal }).catch(() => undefined); // aborted: the loop ends
    }
  }

  async #scrape(key: string, e: Endpoint, signal: AbortSignal | undefined): Promise<void> {
    const { book, now, log } = this.#opts;
    const at = now();
    // In flight when the scrape is sent: a request the pod has not counted yet is counted twice
    // (metric + our change) rather than not at all, until the next scrape.
    const inflightAtScrape = book.inflight(key);
    const deadline = AbortSignal.timeout(this.#opts.timeoutMs ?? SCRAPE_TIMEOUT_MS);
    try {
      const res = await this.#fetch(`http://${hostPort(e)}/metrics`, {
        headers: { accept: 'text/plain' },
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new ScrapeError(`answered ${res.status}`);
      }
      const value = sumOfMetrics(await readCapped(res, this.#opts.maxBytes ?? SCRAPE_MAX_BYTES), this.#names);
      if (value === undefined) throw new ScrapeError('has none of LOAD_METRICS');
      book.scraped(key, value, at, inflightAtScrape);
      this.#opts.onResult?.('ok');
      if (this.#failing.delete(key)) log.info('scrape recovered', { pod: e.pod, endpoint: key });
    } catch (err) {
      if (signal?.aborted) return; // stopping: not the pod's fault
      book.scrapeFailed(key);
      this.#opts.onResult?.('error');
      if (!this.#failing.has(key)) {
        this.#failing.add(key);
        log.warn('scrape failed; the pod is balanced by in-flight count', { pod: e.pod, endpoint: key, err: describe(err) });
      }
    }
  }
}

/** `address:port`, the address bracketed when it is IPv6. */
export function hostPort(e: Pick<Endpoint, 'address' | 'port'>): string {
  return e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new ScrapeError(`/metrics is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(err: unknown): string {
  if (err instanceof ScrapeError) return err.message;
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError') return 'timed out';
  // fetch says only "fetch failed"; the socket's error (ECONNREFUSED, …) is its cause.
  const cause = err.cause instanceof Error ? ((err.cause as NodeJS.ErrnoException).code ?? err.cause.message) : undefined;
  return cause ? `${err.message}: ${cause}` : err.message;
}
