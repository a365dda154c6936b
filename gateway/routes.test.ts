import { describe, expect, it } from 'vitest';
import { LABELS, MANAGED_BY } from '../schema/model-service.ts';
import { routesFrom, resolveRoute, type EndpointSlice, type IgnoredSlice } from './routes.ts';

const A1 = '01JABCDEFGHJKMNPQRSTVWXYZ0';
const A2 = '01JABCDEFGHJKMNPQRSTVWXYZ1';

type Ep = NonNullable<EndpointSlice['endpoints']>[number];
const ep = (address: string, pod: string, conditions: Ep['conditions'] = { ready: true }): Ep => ({ addresses: [address], conditions, targetRef: { kind: 'Pod', name: pod } });

function slice(name: string, o: { ns?: string; tenant?: string; admission?: string; endpoints?: Ep[]; port?: number; portName?: string; addressType?: string } = {}): EndpointSlice {
  const labels: Record<string, string> = { [LABELS.managedBy]: MANAGED_BY };
  if (o.tenant !== '') labels[LABELS.tenant] = o.tenant ?? 'acme';
  if (o.admission !== '') labels[LABELS.admissionId] = o.admission ?? A1;
  return {
    metadata: { name, namespace: o.ns ?? 'md-acme', labels },
    addressType: o.addressType ?? 'IPv4',
    endpoints: o.endpoints ?? [ep('10.0.0.1', 'p1')],
    ports: [{ name: o.portName ?? 'http', port: o.port ?? 8000, protocol: 'TCP' }],
  };
}

function run(slices: EndpointSlice[], prefix = 'md-') {
  const ignored: IgnoredSlice[] = [];
  return { routes: routesFrom(slices, prefix, (s) => ignored.push(s)), ignored };
}

describe('routesFrom', () => {
  it('one route per admission: its tenant, namespace and ready endpoints on the http port', () => {
    const { routes, ignored } = run([slice('s1', { endpoints: [ep('10.0.0.2', 'p2'), ep('10.0.0.1', 'p1')] }), slice('s2', { admission: A2, endpoints: [] })]);
    expect(ignored).toEqual([]);
    expect(routes.get(A1)).toEqual({
      tenant: 'acme',
      namespace: 'md-acme',
      endpoints: [
        { address: '10.0.0.1', port: 8000, pod: 'p1' },
        { address: '10.0.0.2', port: 8000, pod: 'p2' },
      ],
    });
    expect(routes.get(A2)).toEqual({ tenant: 'acme', namespace: 'md-acme', endpoints: [] });
  });

  it('keeps only endpoints that are ready and not terminating', () => {
    const { routes } = run([
      slice('s', {
        endpoints: [
          ep('10.0.0.1', 'ready'),
          ep('10.0.0.2', 'not-ready', { ready: false }),
          ep('10.0.0.3', 'unknown', { ready: null }),
          { addresses: ['10.0.0.4'], targetRef: { kind: 'Pod', name: 'no-conditions' } },
          ep('10.0.0.5', 'terminating-but-ready', { ready: true, terminating: true }),
          { addresses: [], conditions: { ready: true } },
        ],
      }),
    ]);
    expect(routes.get(A1)!.endpoints.map((e) => e.pod)).toEqual(['ready']);
  });

  it('merges an admission\'s slices (one per address family and per hundred endpoints) without duplicates', () => {
    const { routes } = run([
      slice('a', { endpoints: [ep('10.0.0.1', 'p1'), ep('10.0.0.2', 'p2')] }),
      slice('b', { endpoints: [ep('10.0.0.2', 'p2'), ep('10.0.0.3', 'p3')] }),
      slice('c', { addressType: 'IPv6', endpoints: [{ addresses: ['fd00::1'], conditions: { ready: true } }] }),
      slice('d', { addressType: 'FQDN', endpoints: [ep('model.example', 'fqdn')] }),
    ]);
    expect(routes.get(A1)!.endpoints).toEqual([
      { address: '10.0.0.1', port: 8000, pod: 'p1' },
      { address: '10.0.0.2', port: 8000, pod: 'p2' },
      { address: '10.0.0.3', port: 8000, pod: 'p3' },
      { address: 'fd00::1', port: 8000, pod: 'fd00::1' },
    ]);
  });

  it('needs the port named http', () => {
    expect(run([slice('s', { portName: 'metrics' })]).routes.get(A1)!.endpoints).toEqual([]);
  });

  it('ignores a slice outside its tenant\'s namespace, or without both labels, and says so', () => {
    const { routes, ignored } = run([
      slice('elsewhere', { ns: 'default' }),
      slice('other-tenant-ns', { ns: 'md-globex' }),
      slice('no-tenant', { tenant: '' }),
      slice('no-admission', { admission: '' }),
    ]);
    expect(routes.size).toBe(0);
    expect(ignored).toEqual([
      { namespace: 'default', name: 'elsewhere', reason: 'foreign_namespace' },
      { namespace: 'md-globex', name: 'other-tenant-ns', reason: 'foreign_namespace' },
      { namespace: 'md-acme', name: 'no-tenant', reason: 'missing_labels' },
      { namespace: 'md-acme', name: 'no-admission', reason: 'missing_labels' },
    ]);
  });

  it('follows the namespace prefix', () => {
    expect(run([slice('s', { ns: 'md-acme' })], 'tenant-').routes.size).toBe(0);
    expect(run([slice('s', { ns: 'tenant-acme' })], 'tenant-').routes.get(A1)?.namespace).toBe('tenant-acme');
  });

  it('drops an admission whose slices name two tenants (each in its own namespace): every slice of it is ignored', () => {
    const { routes, ignored } = run([slice('a'), slice('b', { tenant: 'globex', ns: 'md-globex' }), slice('c', { admission: A2 })]);
    expect([...routes.keys()]).toEqual([A2]);
    expect(ignored.map((i) => `${i.name}:${i.reason}`)).toEqual(['a:conflicting_tenant', 'b:conflicting_tenant']);
  });
});

describe('resolveRoute', () => {
  const { routes } = run([slice('s'), slice('empty', { admission: A2, endpoints: [] })]);

  it('routes the admission of its own tenant', () => {
    expect(resolveRoute(routes, 'acme', A1)).toEqual({ kind: 'route', route: routes.get(A1) });
  });

  it('another tenant\'s admission is not found; an admission without a route is unknown (its slice may be on its way)', () => {
    expect(resolveRoute(routes, 'globex', A1)).toEqual({ kind: 'not_found' });
    expect(resolveRoute(routes, 'globex', A2)).toEqual({ kind: 'not_found' }); // even without a ready endpoint
    expect(resolveRoute(routes, 'acme', '01JZZZZZZZZZZZZZZZZZZZZZZZ')).toEqual({ kind: 'unknown' });
  });

  it('a known admission without a ready endpoint', () => {
    expect(resolveRoute(routes, 'acme', A2)).toEqual({ kind: 'no_ready_endpoint', route: routes.get(A2) });
  });
});
