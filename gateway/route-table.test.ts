import { describe, expect, it } from 'vitest';
import { createLogger } from '../controller/runtime/log.ts';
import type { InformerHandlers } from '../controller/runtime/informer.ts';
import { LABELS, MANAGED_BY } from '../schema/model-service.ts';
import { RouteTable, sliceSelector, type SliceSource } from './route-table.ts';
import type { EndpointSlice, IgnoreReason, Route } from './routes.ts';

const A1 = '01JABCDEFGHJKMNPQRSTVWXYZ0';

function slice(name: string, namespace: string, ready = true): EndpointSlice {
  return {
    metadata: { name, namespace, labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.tenant]: 'acme', [LABELS.admissionId]: A1 } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready } }],
    ports: [{ name: 'http', port: 8000 }],
  };
}

/** An informer stand-in: a list and the handlers registered on it. */
function fakeInformer(items: EndpointSlice[]) {
  const handlers: Array<InformerHandlers<EndpointSlice>> = [];
  let lists = 0;
  const source: SliceSource = {
    synced: true,
    addHandlers: (h) => void handlers.push(h),
    list: () => {
      lists += 1;
      return items;
    },
  };
  return { source, items, lists: () => lists, fire: () => handlers.forEach((h) => h.update?.(items[0]!, undefined)) };
}

describe('sliceSelector', () => {
  it('ModelDock\'s slices naming an admission, of the installation when set', () => {
    expect(sliceSelector(undefined)).toBe('app.kubernetes.io/managed-by=modeldock,modeldock.io/admission-id');
    expect(sliceSelector('blue')).toBe('app.kubernetes.io/managed-by=modeldock,modeldock.io/admission-id,modeldock.io/instance=blue');
  });
});

describe('RouteTable', () => {
  it('computes on the first read and after an event only, however many reads', () => {
    const inf = fakeInformer([slice('s', 'md-acme')]);
    const computed: Array<ReadonlyMap<string, Route>> = [];
    const table = new RouteTable({ slices: inf.source, prefix: 'md-', log: createLogger({ write: () => undefined }), onComputed: (r) => void computed.push(r) });
    expect(table.table().get(A1)?.endpoints).toHaveLength(1);
    table.table();
    expect(inf.lists()).toBe(1);
    inf.items[0] = slice('s', 'md-acme', false);
    inf.fire();
    inf.fire();
    expect(table.table().get(A1)?.endpoints).toEqual([]);
    expect(inf.lists()).toBe(2);
    expect(computed).toHaveLength(2);
  });

  it('says once why a slice is ignored, and counts the ignored by reason', () => {
    const lines: Array<Record<string, unknown>> = [];
    const inf = fakeInformer([slice('stray', 'default')]);
    let counts: Record<IgnoreReason, number> | undefined;
    const table = new RouteTable({ slices: inf.source, prefix: 'md-', log: createLogger({ write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) }), onComputed: (_, c) => (counts = { ...c }) });
    table.table();
    inf.fire();
    table.table();
    expect(lines.map((l) => [l.msg, l.namespace, l.slice, l.reason])).toEqual([['EndpointSlice ignored', 'default', 'stray', 'foreign_namespace']]);
    expect(counts).toEqual({ missing_labels: 0, foreign_namespace: 1, conflicting_tenant: 0 });
  });

  it('changed() resolves at the next event (every waiter, once), or at once when its signal aborts', async () => {
    const inf = fakeInformer([slice('s', 'md-acme', false)]);
    const table = new RouteTable({ slices: inf.source, prefix: 'md-', log: createLogger({ write: () => undefined }) });
    expect(table.table().get(A1)?.endpoints).toEqual([]);
    const heard: string[] = [];
    const a = table.changed(new AbortController().signal).then(() => heard.push('a'));
    const b = table.changed(new AbortController().signal).then(() => heard.push('b'));
    const gone = new AbortController();
    const c = table.changed(gone.signal).then(() => heard.push('c'));
    gone.abort();
    await c;
    expect(heard).toEqual(['c']);
    inf.items[0] = slice('s', 'md-acme', true);
    inf.fire();
    inf.fire();
    await Promise.all([a, b]);
    expect(heard).toEqual(['c', 'a', 'b']);
    expect(table.table().get(A1)?.endpoints).toHaveLength(1);
    await table.changed(AbortSignal.abort()); // already aborted: at once
  });
});
