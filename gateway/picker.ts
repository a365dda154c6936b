// Which ready endpoint of an admission takes the next request (pure). Least-load reads each pod's
// load from its own /metrics (the gauges LOAD_METRICS names, summed by the scraper), which counts
// every gateway replica's requests and the model's queue; between two scrapes the gateway's own
// in-flight change is added, so a burst does not all land on the pod that looked idle at the last
// scrape. Without a fresh scrape, the gateway's in-flight count is all it knows.
import { endpointKey, type Endpoint } from './routes.ts';

export interface EndpointLoad {
  /** The gateway's requests to the endpoint now (this replica's). */
  inflight: number;
  /** The last successful scrape: the summed gauges, when it was sent, and `inflight` then. */
  scraped?: { value: number; at: number; inflightAtScrape: number };
}

export type Policy = 'least-load' | 'round-robin';
/** What decided a pick: a fresh scrape, the in-flight count alone, or the rotation (round-robin). */
export type PickSource = 'metrics' | 'inflight' | 'round_robin';

export interface PickOptions {
  policy: Policy;
  /** A scrape older than this is not believed (METRICS_STALE_MS). */
  staleMs: number;
}

export interface PickState {
  loads: ReadonlyMap<string, EndpointLoad>;
  /** Rotation position: ties (and round-robin) take turns. */
  cursor: number;
}

export interface Picked {
  endpoint: Endpoint;
  source: PickSource;
  load: number;
  /** The cursor for the next pick of the same admission. */
  cursor: number;
}

/** An endpoint's load now and where the number came from. */
export function loadOf(l: EndpointLoad | undefined, now: number, staleMs: number): { load: number; source: 'metrics' | 'inflight' } {
  const inflight = l?.inflight ?? 0;
  const s = l?.scraped;
  if (!s || now - s.at > staleMs) return { load: inflight, source: 'inflight' };
  return { load: Math.max(inflight, s.value + inflight - s.inflightAtScrape), source: 'metrics' };
}

export function pick(endpoints: readonly Endpoint[], state: PickState, now: number, opts: PickOptions): Picked | undefined {
  if (endpoints.length === 0) return undefined;
  const cursor = state.cursor + 1;
  if (opts.policy === 'round-robin') {
    const endpoint = endpoints[state.cursor % endpoints.length]!;
    return { endpoint, source: 'round_robin', load: state.loads.get(endpointKey(endpoint))?.inflight ?? 0, cursor };
  }
  const scored = endpoints.map((endpoint) => ({ endpoint, ...loadOf(state.loads.get(endpointKey(endpoint)), now, opts.staleMs) }));
  const least = Math.min(...scored.map((s) => s.load));
  const tied = scored.filter((s) => s.load === least);
  const chosen = tied[state.cursor % tied.length]!;
  return { endpoint: chosen.endpoint, source: chosen.source, load: chosen.load, cursor };
}
