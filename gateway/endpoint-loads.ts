// Every routed endpoint's load as the picker would read it now (pure): the source of the
// modeldock_gateway_endpoint_load gauge, computed at each scrape of the gateway's /metrics from
// the live route table and load book, so it cannot drift from what decides and an endpoint that
// left its route is simply absent. Round-robin ignores load but the number is the same: it says
// what least-load would have read.
import { loadOf, type EndpointLoad } from './picker.ts';
import { endpointKey, type Route } from './routes.ts';

export interface EndpointLoadSample {
  tenant: string;
  admission: string;
  pod: string;
  /** The pod's IP, without the port. */
  address: string;
  load: number;
}

export function endpointLoads(routes: ReadonlyMap<string, Route>, loads: ReadonlyMap<string, EndpointLoad>, now: number, staleMs: number): EndpointLoadSample[] {
  const out: EndpointLoadSample[] = [];
  for (const [admission, route] of routes) {
    for (const e of route.endpoints) {
      const { load } = loadOf(loads.get(endpointKey(e)), now, staleMs);
      out.push({ tenant: route.tenant, admission, pod: e.pod, address: e.address, load });
    }
  }
  return out;
}
