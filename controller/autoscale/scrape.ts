// The load of an admission's pods, read from each pod's /metrics (Prometheus text): requests
// waiting plus requests generating. Names for the mock model server and for vLLM by default.
// One pod's failure is that pod's result (ok: false), never the call's; only the caller's abort
// rejects. Every request has its own deadline; at most `concurrency` are in flight at once.
import { parsePrometheus, metricValue, type Sample } from '../../schema/prom-text.ts';

export interface PodTarget {
  name: string;
  ip: string;
  port: number;
}

export type PodLoad = { pod: string; ok: true; waiting: number; busy: number } | { pod: string; ok: false; error: string };

export interface LoadMetricNames {
  waiting: string;
  busy: string;
}

export interface ScrapeOptions {
  fetch: typeof fetch;
  /** Deadline of one pod's request, body included. */
  timeoutMs: number;
  /** At most this many requests in flight over the whole call. */
  concurrency: number;
  path?: string;
  /** Tried in order; the first pair whose two names are both in the text wins. */
  metricNames?: ReadonlyArray<LoadMetricNames>;
  /** A body larger than this is refused (read with a cap, never buffered whole). */
  maxBytes?: number;
}

export const DEFAULT_LOAD_METRICS: ReadonlyArray<LoadMetricNames> = Object.freeze([
  { waiting: 'modeldock_mock_queue_depth', busy: 'modeldock_mock_slots_busy' },
  { waiting: 'vllm:num_requests_waiting', busy: 'vllm:num_requests_running' },
]);

const DEFAULT_MAX_BYTES = 1 << 20;

export async function scrapePods(targets: readonly PodTarget[], opts: ScrapeOptions, signal: AbortSignal): Promise<PodLoad[]> {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${opts.concurrency}`);
  if (!(opts.timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, got ${opts.timeoutMs}`);
  if (opts.metricNames?.length === 0) throw new RangeError('metricNames must name at least one pair');
  signal.throwIfAborted();
  const results = new Array<PodLoad>(targets.length);
  let next = 0;
  async function worker(): Promise<void> {
    for (let i = next++; i < targets.length; i = next++) {
      results[i] = await scrapePod(targets[i]!, opts, signal);
    }
  }
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, targets.length) }, worker));
  return results;
}

export function metricsUrl(target: PodTarget, path = '/metrics'): string {
  const host = target.ip.includes(':') ? `[${target.ip}]` : target.ip;
  return `http://${host}:${target.port}${path}`;
}

async function scrapePod(target: PodTarget, opts: ScrapeOptions, signal: AbortSignal): Promise<PodLoad> {
  const url = metricsUrl(target, opts.path);
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const both = AbortSignal.any([signal, deadline]);
  try {
    const text = await untilAborted(readMetrics(url, opts, both), both);
    return { pod: target.name, ok: true, ...loadOf(parsePrometheus(text), opts.metricNames ?? DEFAULT_LOAD_METRICS) };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const reason = deadline.aborted ? `timed out after ${opts.timeoutMs} ms` : error instanceof Error ? error.message : String(error);
    return { pod: target.name, ok: false, error: `GET ${url}: ${reason}` };
  }
}

async function readMetrics(url: string, opts: ScrapeOptions, signal: AbortSignal): Promise<string> {
  const res = await opts.fetch(url, { signal, redirect: 'error', headers: { accept: 'text/plain; version=0.0.4' } });
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`HTTP ${res.status}`);
  }
  return readCapped(res, opts.maxBytes ?? DEFAULT_MAX_BYTES);
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new Error(`body larger than ${maxBytes} bytes`);
    }
    text += decoder.decode(value, { stream: true });
  }
}

function loadOf(samples: readonly Sample[], pairs: ReadonlyArray<LoadMetricNames>): { waiting: number; busy: number } {
  const present = new Set(samples.map((s) => s.name));
  const pair = pairs.find((p) => present.has(p.waiting) && present.has(p.busy));
  if (pair) return { waiting: metricValue(samples, pair.waiting), busy: metricValue(samples, pair.busy) };
  const missing = pairs.map((p) => [p.waiting, p.busy].filter((name) => !present.has(name)).join(' and '));
  throw new Error(`no load metrics: missing ${missing.join('; or missing ')}`);
}

/** Settles like `work`, or rejects with the signal's reason as soon as it aborts (a fetch that ignores its signal still meets the deadline). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The fields of a core/v1 Pod that podTargets reads. */
export interface ScrapedPod {
  metadata: { name: string; deletionTimestamp?: string | null };
  status?: { podIP?: string; conditions?: ReadonlyArray<{ type: string; status: string }> };
}

/**
 * The pods to scrape: Ready=True, not terminating, with a podIP. `ready` counts the Ready,
 * not-terminating pods (with or without an IP): the replicas that carry the load.
 */
export function podTargets(pods: readonly ScrapedPod[], port: number): { targets: PodTarget[]; ready: number } {
  const ready = pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  const targets = ready.flatMap((p) => (p.status?.podIP ? [{ name: p.metadata.name, ip: p.status.podIP, port }] : []));
  return { targets, ready: ready.length };
}
