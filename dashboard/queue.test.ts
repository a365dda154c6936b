// A queued admission on the page, run against the small in-memory DOM: state `queued`, its place
// and estimated wait from GET /queue (the list has none) or why there is no estimate, when it
// expires, and a Cancel button that DELETEs it and says nothing was charged. GET /queue is only
// asked while something is queued. (The real browser, CSP and all: test/e2e/dashboard.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeDocument, startPage, stopPage } from './fake-dom.ts';
import { aboutWait, expiryText, placesById, queuePlaceText } from './public/assets/queue.js';

const document = fakeDocument();
const { getElementById } = document;

const base = { spec: { replicas: 1 }, createdAt: '2026-12-01T10:00:00.000Z', binding: null, releaseBlockedSince: null, lastError: null, endpoint: null };
const queueInfo = { position: null, estimate: null, queuedAt: '2026-12-01T10:00:00.000Z', bypassed: 0, leftAt: null, estimatedWaitAtQueueing: 40 };
const head = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7A', name: 'head', state: 'queued', queue: { ...queueInfo, expiresAt: '2026-12-01T11:00:00.000Z' } };
const second = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7B', name: 'second', state: 'queued', queue: { ...queueInfo, expiresAt: null } };
const running = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7C', name: 'running', state: 'ready' };
const cancelled = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7D', name: 'gone', state: 'cancelled', queue: { ...queueInfo, expiresAt: null, leftAt: '2026-12-01T10:01:00.000Z' } };
const queueView = {
  tenant: 'acme',
  queued: 2,
  items: [
    { id: head.id, position: 1, amounts: { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0 }, estimate: { seconds: 40, method: 'release-rate', basis: 'b' } },
    { id: second.id, position: 2, amounts: { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0 }, estimate: { seconds: null, method: 'release-rate', reason: 'nothing released recently' } },
  ],
};

const storage = new Map([['modeldock.key', 'tenant-key-0123456789abcdef']]);
let items: unknown[] = [head, second, running, cancelled];
const calls: string[] = [];

const rows = () => getElementById('admissions').tBodies[0]?.children ?? [];
const row = (id: string) => rows().find((r) => r.dataset.id === id)!;
const buttons = (id: string, action: string) => row(id).find((n) => n.dataset.action === action);
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
};
/** The page refreshed with `list` as GET /requests (the refresh a sign-in runs): the tests run in any order. */
async function showing(list: unknown[]): Promise<void> {
  items = list;
  calls.length = 0;
  getElementById('key').value = 'tenant-key-0123456789abcdef';
  for (const f of getElementById('key-form').listeners.get('submit') ?? []) (f as unknown as (e: { preventDefault(): void }) => void)({ preventDefault() {} });
  await settle();
  expect(rows().map((r) => r.dataset.id)).toEqual(list.map((a) => (a as { id: string }).id));
}

beforeAll(async () => {
  await startPage(document, {
    storage,
    fetch: async (path: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      calls.push(`${method} ${path}`);
      let body: unknown;
      if (method === 'DELETE') {
        const id = decodeURIComponent(path.split('/').at(-1)!);
        items = items.map((a) => ((a as { id: string }).id === id ? { ...(a as object), state: 'cancelled' } : a));
        body = items.find((a) => (a as { id: string }).id === id);
      } else if (path.startsWith('/quota')) body = { tenant: 'acme', resources: {} };
      else if (path.startsWith('/queue')) body = queueView;
      else body = { items, nextCursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    },
  });
});

afterAll(() => stopPage(document));


describe('the queue texts', () => {
  it('words the place, the estimate or why there is none, and the expiry', () => {
    expect([40, 119, 120, 7199, 7200].map(aboutWait)).toEqual(['about 40 s', 'about 119 s', 'about 2 min', 'about 120 min', 'about 2 h']);
    expect(queuePlaceText(2, { seconds: 40 })).toBe('position 2 · about 40 s');
    expect(queuePlaceText(1, { seconds: 0 })).toBe('position 1 · next to be admitted');
    expect(queuePlaceText(3, { seconds: null, reason: 'no rate' })).toBe('position 3 · no estimate: no rate');
    expect(queuePlaceText(null, null)).toBe('position not known yet · no estimate');
    expect(expiryText('2026-12-01T11:00:00.000Z', (iso) => `<${iso}>`)).toBe('expires <2026-12-01T11:00:00.000Z> unless admitted');
    expect(expiryText(null, String)).toBe('no expiry: waits until admitted or cancelled');
    expect(placesById(queueView).get(second.id)?.position).toBe(2);
    expect(placesById(null).size).toBe(0);
  });
});

describe('a queued admission on the page', () => {
  it('shows the state queued, its place from GET /queue and its expiry instead of a timeline', async () => {
    await showing([head, second, running, cancelled]);
    expect(calls).toContain('GET /queue');
    const r = row(head.id);
    expect(r.dataset.state).toBe('queued');
    expect(r.children[1]!.textContent).toBe('queued');
    const cell = r.children[2]!;
    expect(cell.find((n) => n.className === 'place')[0]?.textContent).toBe('position 1 · about 40 s');
    expect(cell.find((n) => n.className === 'expires')[0]?.textContent).toBe(`expires ${new Date(head.queue.expiresAt).toLocaleString()} unless admitted`);
    expect(cell.find((n) => n.className === 'timeline')).toEqual([]);
    const other = row(second.id).children[2]!;
    expect(other.find((n) => n.className === 'place')[0]?.textContent).toBe('position 2 · no estimate: nothing released recently');
    expect(other.find((n) => n.className === 'expires')[0]?.textContent).toBe('no expiry: waits until admitted or cancelled');
  });

  it('has Cancel (not Delete) while queued; a running one Delete; a cancelled one neither', async () => {
    await showing([head, second, running, cancelled]);
    expect(buttons(head.id, 'cancel')).toHaveLength(1);
    expect(buttons(head.id, 'delete')).toEqual([]);
    expect(buttons(running.id, 'delete')).toHaveLength(1);
    expect(buttons(running.id, 'cancel')).toEqual([]);
    expect(buttons(cancelled.id, 'cancel')).toEqual([]);
    expect(buttons(cancelled.id, 'delete')).toEqual([]);
  });

  it('Cancel DELETEs it, says nothing was charged, and the row shows cancelled', async () => {
    await showing([head, second, running, cancelled]);
    buttons(second.id, 'cancel')[0]!.click();
    await settle();
    expect(calls).toContain(`DELETE /requests/${second.id}`);
    expect(getElementById('notice').textContent).toBe('Cancelled second: it left the queue; nothing was charged.');
    expect(row(second.id).dataset.state).toBe('cancelled');
    expect(buttons(second.id, 'cancel')).toEqual([]);
  });

  it('asks GET /queue only while something is queued', async () => {
    await showing([running, cancelled]);
    expect(calls).toContain('GET /requests?limit=100');
    expect(calls).not.toContain('GET /queue');
  });
});
