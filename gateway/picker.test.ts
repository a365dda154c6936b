import { describe, expect, it } from 'vitest';
import { loadOf, pick, type EndpointLoad, type PickOptions } from './picker.ts';
import type { Endpoint } from './routes.ts';

const e = (n: number): Endpoint => ({ address: `10.0.0.${n}`, port: 8000, pod: `p${n}` });
const [A, B, C] = [e(1), e(2), e(3)];
const least: PickOptions = { policy: 'least-load', staleMs: 2000 };
const NOW = 100_000;
const loads = (entries: Array<[Endpoint, EndpointLoad]>) => new Map(entries.map(([ep, l]) => [`${ep.address}:${ep.port}`, l]));
const scraped = (value: number, ageMs: number, inflightAtScrape = 0) => ({ value, at: NOW - ageMs, inflightAtScrape });

/** The pods `n` picks in a row choose, the cursor carried from one pick to the next. */
function picks(endpoints: Endpoint[], l: Map<string, EndpointLoad>, n: number, opts = least): string[] {
  const out: string[] = [];
  let cursor = 0;
  for (let i = 0; i < n; i++) {
    const p = pick(endpoints, { loads: l, cursor }, NOW, opts)!;
    out.push(p.endpoint.pod);
    cursor = p.cursor;
  }
  return out;
}

describe('loadOf', () => {
  it('a fresh scrape, corrected by the in-flight change since it', () => {
    expect(loadOf({ inflight: 3, scraped: scraped(5, 100, 1) }, NOW, 2000)).toEqual({ load: 7, source: 'metrics' });
    expect(loadOf({ inflight: 1, scraped: scraped(5, 100, 3) }, NOW, 2000)).toEqual({ load: 3, source: 'metrics' });
  });

  it('never below the gateway\'s own in-flight count', () => {
    expect(loadOf({ inflight: 4, scraped: scraped(0, 100, 4) }, NOW, 2000)).toEqual({ load: 4, source: 'metrics' });
    expect(loadOf({ inflight: 2, scraped: scraped(0, 100, 5) }, NOW, 2000)).toEqual({ load: 2, source: 'metrics' });
  });

  it('a scrape older than staleMs, or none, falls back to in-flight', () => {
    expect(loadOf({ inflight: 2, scraped: scraped(9, 2001) }, NOW, 2000)).toEqual({ load: 2, source: 'inflight' });
    expect(loadOf({ inflight: 2, scraped: scraped(9, 2000, 2) }, NOW, 2000)).toEqual({ load: 9, source: 'metrics' });
    expect(loadOf({ inflight: 1 }, NOW, 2000)).toEqual({ load: 1, source: 'inflight' });
    expect(loadOf(undefined, NOW, 2000)).toEqual({ load: 0, source: 'inflight' });
  });
});

describe('pick: least-load', () => {
  it('sends to the least loaded pod by its scraped gauges', () => {
    const p = pick([A, B, C], { loads: loads([[A, { inflight: 0, scraped: scraped(2, 10) }], [B, { inflight: 0, scraped: scraped(0, 10) }], [C, { inflight: 0, scraped: scraped(1, 10) }]]), cursor: 0 }, NOW, least);
    expect(p).toEqual({ endpoint: B, source: 'metrics', load: 0, cursor: 1 });
  });

  it('a scrape that says idle does not hide the requests sent since (a burst spreads)', () => {
    // Both scraped at 0; A has since taken 2 of ours.
    const l = loads([[A, { inflight: 2, scraped: scraped(0, 10, 0) }], [B, { inflight: 0, scraped: scraped(0, 10, 0) }]]);
    expect(pick([A, B], { loads: l, cursor: 0 }, NOW, least)!.endpoint).toBe(B);
  });

  it('a pod busy with other gateways\' requests (seen only in its metrics) is avoided', () => {
    const l = loads([[A, { inflight: 0, scraped: scraped(2, 10) }], [B, { inflight: 1 }]]);
    expect(pick([A, B], { loads: l, cursor: 0 }, NOW, least)).toMatchObject({ endpoint: B, source: 'inflight', load: 1 });
  });

  it('a stale scrape is not believed: in-flight decides', () => {
    const l = loads([[A, { inflight: 0, scraped: scraped(8, 5000) }], [B, { inflight: 1, scraped: scraped(0, 5000) }]]);
    expect(pick([A, B], { loads: l, cursor: 0 }, NOW, least)).toMatchObject({ endpoint: A, source: 'inflight', load: 0 });
  });

  it('ties take turns', () => {
    expect(picks([A, B, C], new Map(), 6)).toEqual(['p1', 'p2', 'p3', 'p1', 'p2', 'p3']);
    const l = loads([[A, { inflight: 0, scraped: scraped(1, 10) }], [B, { inflight: 0, scraped: scraped(0, 10) }], [C, { inflight: 0, scraped: scraped(0, 10) }]]);
    expect(picks([A, B, C], l, 4)).toEqual(['p2', 'p3', 'p2', 'p3']);
  });

  it('nothing to pick from', () => {
    expect(pick([], { loads: new Map(), cursor: 0 }, NOW, least)).toBeUndefined();
  });
});

describe('pick: round-robin', () => {
  it('rotates whatever the load', () => {
    const l = loads([[A, { inflight: 9, scraped: scraped(9, 10) }]]);
    expect(picks([A, B, C], l, 4, { policy: 'round-robin', staleMs: 2000 })).toEqual(['p1', 'p2', 'p3', 'p1']);
    expect(pick([A, B], { loads: l, cursor: 0 }, NOW, { policy: 'round-robin', staleMs: 2000 })).toEqual({ endpoint: A, source: 'round_robin', load: 9, cursor: 1 });
  });
});
