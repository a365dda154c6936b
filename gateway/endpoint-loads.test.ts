import { describe, expect, it } from 'vitest';
import { endpointLoads } from './endpoint-loads.ts';
import type { EndpointLoad } from './picker.ts';
import type { Route } from './routes.ts';

const A1 = '01JABCDEFGHJKMNPQRSTVWXYZ0';
const A2 = '01JABCDEFGHJKMNPQRSTVWXYZ1';
const NOW = 100_000;
const route = (tenant: string, ...ips: string[]): Route => ({ tenant, namespace: `md-${tenant}`, endpoints: ips.map((address, i) => ({ address, port: 8000, pod: `p${i}` })) });

describe('endpointLoads', () => {
  it('every endpoint of every route, labelled by tenant, admission, pod and IP, at the load the picker reads', () => {
    const routes = new Map([[A1, route('acme', '10.0.0.1', '10.0.0.2')], [A2, route('globex', '10.0.1.1')], ['01JEMPTY0000000000000000000', route('acme')]]);
    const loads = new Map<string, EndpointLoad>([
      ['10.0.0.1:8000', { inflight: 0, scraped: { value: 2, at: NOW - 100, inflightAtScrape: 0 } }],
      ['10.0.0.2:8000', { inflight: 1, scraped: { value: 5, at: NOW - 5000, inflightAtScrape: 0 } }], // stale: in-flight only
    ]);
    expect(endpointLoads(routes, loads, NOW, 2000)).toEqual([
      { tenant: 'acme', admission: A1, pod: 'p0', address: '10.0.0.1', load: 2 },
      { tenant: 'acme', admission: A1, pod: 'p1', address: '10.0.0.2', load: 1 },
      { tenant: 'globex', admission: A2, pod: 'p0', address: '10.0.1.1', load: 0 },
    ]);
  });

  it('the gateway\'s own request since the scrape counts until the next one', () => {
    const routes = new Map([[A1, route('acme', '10.0.0.1')]]);
    const loads = new Map<string, EndpointLoad>([['10.0.0.1:8000', { inflight: 1, scraped: { value: 2, at: NOW - 100, inflightAtScrape: 0 } }]]);
    expect(endpointLoads(routes, loads, NOW, 2000)[0]!.load).toBe(3);
  });
});
