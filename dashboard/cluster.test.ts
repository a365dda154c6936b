// The page names the cluster an admission is placed on, under its state (issue 33: placement in
// the charging transaction), as GET /requests reports it; a queued admission, placed nowhere yet,
// shows none. (The real browser: test/e2e/dashboard.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeDocument, startPage, stopPage } from './fake-dom.ts';

const document = fakeDocument();
const { getElementById } = document;

const base = { spec: { replicas: 1 }, createdAt: '2026-12-01T10:00:00.000Z', binding: null, releaseBlockedSince: null, lastError: null, endpoint: null };
const onC2 = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K', name: 'chat', state: 'delivered', cluster: 'c2' };
const single = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7M', name: 'solo', state: 'admitted', cluster: 'default' };
const queued = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7N', name: 'waits', state: 'queued', cluster: null, queue: { position: 1, estimate: null, expiresAt: null } };

const rows = () => getElementById('admissions').tBodies[0]?.children ?? [];
const stateCell = (id: string) => rows().find((r) => r.dataset.id === id)!.children[1]!;
const clusterLine = (id: string) => stateCell(id).find((n) => n.className === 'cluster')[0]?.textContent;

beforeAll(async () => {
  await startPage(document, {
    storage: new Map([['modeldock.key', 'tenant-key-0123456789abcdef']]),
    fetch: async (path: string) => {
      const body = path.startsWith('/quota')
        ? { tenant: 'acme', resources: {} }
        : path.startsWith('/queue')
          ? { tenant: 'acme', queued: 1, items: [] }
          : { items: [onC2, single, queued], nextCursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    },
  });
});

afterAll(() => stopPage(document));

describe('the cluster of an admission', () => {
  it('is shown under the state as the API reports it', () => {
    expect(clusterLine(onC2.id)).toBe('on c2');
    expect(clusterLine(single.id)).toBe('on default');
  });

  it('is absent while the admission waits in the queue (placed nowhere)', () => {
    expect(stateCell(queued.id).textContent).toBe('queued');
    expect(clusterLine(queued.id)).toBeUndefined();
  });
});
