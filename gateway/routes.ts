// Where an admission's requests may go, computed from the EndpointSlices of ModelDock's Services
// (pure). The EndpointSlice controller copies a Service's labels onto its slices, and ModelDock's
// Services carry the admission id and the tenant (controller/modelservice/desired.ts childLabels),
// so a slice names whose pods it lists. A slice is believed only in its tenant's own namespace:
// the tenant label alone would let whoever labels a Service elsewhere receive a tenant's requests.
import { LABELS } from '../schema/model-service.ts';
import { tenantNamespace } from '../schema/tenant-namespace.ts';
import type { KubeObject } from '../controller/runtime/informer.ts';

/** The Service port the gateway sends to (controller/modelservice/desired.ts PORT_NAME). */
const SERVICE_PORT_NAME = 'http';

/** The fields of a discovery.k8s.io/v1 EndpointSlice the gateway reads. */
export interface EndpointSlice extends KubeObject {
  addressType?: string;
  endpoints?: Array<{
    addresses?: string[];
    conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null };
    targetRef?: { kind?: string; name?: string; namespace?: string };
  }> | null;
  ports?: Array<{ name?: string | null; port?: number | null; protocol?: string | null }> | null;
}

export interface Endpoint {
  address: string;
  port: number;
  /** The pod behind it (its targetRef), or the address when the slice names none. */
  pod: string;
}

export interface Route {
  tenant: string;
  namespace: string;
  /** Ready, not terminating; sorted by address and port, without duplicates. */
  endpoints: Endpoint[];
}

export type IgnoreReason = 'missing_labels' | 'foreign_namespace' | 'conflicting_tenant';
export interface IgnoredSlice {
  namespace: string;
  name: string;
  reason: IgnoreReason;
}

/** The key the load book and the picker know an endpoint by. */
export const endpointKey = (e: Pick<Endpoint, 'address' | 'port'>): string => `${e.address}:${e.port}`;

/**
 * One route per admission: the ready, not terminating endpoints of every slice labelled with it
 * (a Service has one slice per address family and per hundred endpoints). A slice outside
 * tenantNamespace(tenant, prefix), or without both labels, is ignored; so is an admission whose
 * slices name different tenants (no guess at which one is right). `ignored` hears every one.
 */
export function routesFrom(slices: Iterable<EndpointSlice>, prefix: string, ignored: (s: IgnoredSlice) => void = () => undefined): Map<string, Route> {
  const byAdmission = new Map<string, Array<{ slice: EndpointSlice; tenant: string }>>();
  for (const slice of slices) {
    const { name, namespace = '', labels = {} } = slice.metadata;
    const admission = labels[LABELS.admissionId];
    const tenant = labels[LABELS.tenant];
    if (!admission || !tenant) ignored({ namespace, name, reason: 'missing_labels' });
    else if (namespace !== tenantNamespace(tenant, prefix)) ignored({ namespace, name, reason: 'foreign_namespace' });
    else byAdmission.set(admission, [...(byAdmission.get(admission) ?? []), { slice, tenant }]);
  }
  const routes = new Map<string, Route>();
  for (const [admission, group] of byAdmission) {
    const tenant = group[0]!.tenant;
    if (group.some((g) => g.tenant !== tenant)) {
      for (const { slice } of group) ignored({ namespace: slice.metadata.namespace ?? '', name: slice.metadata.name, reason: 'conflicting_tenant' });
      continue;
    }
    const endpoints = sortedUnique(group.flatMap((g) => readyEndpoints(g.slice)));
    routes.set(admission, { tenant, namespace: tenantNamespace(tenant, prefix), endpoints });
  }
  return routes;
}

function readyEndpoints(slice: EndpointSlice): Endpoint[] {
  if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') return [];
  const port = slice.ports?.find((p) => p.name === SERVICE_PORT_NAME)?.port;
  if (!port) return [];
  const out: Endpoint[] = [];
  for (const e of slice.endpoints ?? []) {
    // A terminating endpoint is usually not ready already, but a Service that publishes
    // not-ready addresses keeps ready true while its pod goes away: both are checked.
    if (e.conditions?.ready !== true || e.conditions.terminating === true) continue;
    const address = e.addresses?.[0];
    if (!address) continue;
    const pod = e.targetRef?.kind === 'Pod' && e.targetRef.name ? e.targetRef.name : address;
    out.push({ address, port, pod });
  }
  return out;
}

function sortedUnique(endpoints: Endpoint[]): Endpoint[] {
  const byKey = new Map(endpoints.map((e) => [endpointKey(e), e]));
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

export type Resolution =
  | { kind: 'route'; route: Route }
  | { kind: 'unknown' }
  | { kind: 'not_found' }
  | { kind: 'no_ready_endpoint'; route: Route };

/**
 * What a request for `admission` of `tenant` gets: its route only when both match. Another
 * tenant's admission is `not_found`, at once. No route at all is `unknown`: the edge signs a
 * credential only for the tenant's own admission, so its slice may just not be in this table yet
 * (the caller waits for it; telling unknown from foreign teaches nothing to a credential's holder).
 */
export function resolveRoute(routes: ReadonlyMap<string, Route>, tenant: string, admission: string): Resolution {
  const route = routes.get(admission);
  if (!route) return { kind: 'unknown' };
  if (route.tenant !== tenant) return { kind: 'not_found' };
  if (route.endpoints.length === 0) return { kind: 'no_ready_endpoint', route };
  return { kind: 'route', route };
}
