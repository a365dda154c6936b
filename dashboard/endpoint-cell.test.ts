// The page's endpoint cell, run against a small in-memory DOM: an admission with an endpoint
// shows its URL and a curl command, each with a Copy button that writes exactly what is shown
// to the clipboard and says so; without a clipboard the text is shown selected, to copy by hand.
// The key the page holds appears nowhere. (The real browser, CSP and all: test/e2e/dashboard.test.ts.)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeDocument, startPage, stopPage } from './fake-dom.ts';
import { curlExample } from './public/assets/usage.js';

const KEY = 'tenant-key-0123456789abcdef';
const ENDPOINT = 'https://api.example.test/v1/models/01JD5Y3QW5ZC8Y1G1M5N8D4X7K';

const document = fakeDocument();
const { getElementById } = document;

const base = { spec: { replicas: 1 }, createdAt: '2026-12-01T10:00:00.000Z', binding: null, releaseBlockedSince: null, lastError: null };
const ready = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K', name: 'chat', state: 'ready', endpoint: ENDPOINT };
const delivered = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7M', name: 'slow', state: 'delivered', endpoint: `${ENDPOINT.slice(0, -1)}M` };
const admitted = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7N', name: 'new', state: 'admitted', endpoint: null };

const storage = new Map([['modeldock.key', KEY]]);
const clipboard: { writeText?: (t: string) => Promise<void> } = {};
const selectAllChildren = vi.fn();

const rows = () => getElementById('admissions').tBodies[0]?.children ?? [];
const row = (id: string) => rows().find((r) => r.dataset.id === id)!;
const cell = (id: string) => row(id).children[3]!;
const button = (id: string, action: string) => cell(id).find((n) => n.dataset.action === action)[0]!;
const notice = () => getElementById('notice');
const settle = () => new Promise((r) => setTimeout(r, 0));

beforeAll(async () => {
  await startPage(document, {
    storage, navigator: { clipboard }, getSelection: () => ({ selectAllChildren }),
    fetch: async (path: string) => {
      const body = path.startsWith('/quota') ? { tenant: 'acme', resources: {} } : { items: [ready, delivered, admitted], nextCursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    },
  });
});

afterAll(() => {
  stopPage(document);
  expect(storage.size).toBe(0);
});


describe('the endpoint cell', () => {
  it('shows the URL and the curl example (the key as $MODELDOCK_KEY, never its value)', () => {
    const c = cell(ready.id);
    expect(c.find((n) => n.className === 'url')[0]?.textContent).toBe(ENDPOINT);
    expect(c.find((n) => n.className === 'example')[0]?.textContent).toBe(curlExample(ENDPOINT));
    expect(c.textContent).toContain('$MODELDOCK_KEY');
    expect(c.textContent).not.toContain('Takes requests once ready');
    for (const r of rows()) expect(r.textContent).not.toContain(KEY);
  });

  it('says a delivered admission takes requests once ready; no endpoint: a dash and no button', () => {
    expect(cell(delivered.id).textContent).toContain('Takes requests once ready');
    expect(cell(admitted.id).textContent).toBe('—');
    expect(cell(admitted.id).find((n) => n.tag === 'button')).toEqual([]);
  });

  it('Copy writes exactly what is shown and says so', async () => {
    const writeText = vi.fn(async () => undefined);
    clipboard.writeText = writeText;
    button(ready.id, 'copy-url').click();
    await settle();
    expect(writeText).toHaveBeenLastCalledWith(ENDPOINT);
    expect(notice().hidden).toBe(false);
    expect(notice().textContent).toBe('Copied the URL.');
    button(ready.id, 'copy-example').click();
    await settle();
    expect(writeText).toHaveBeenLastCalledWith(curlExample(ENDPOINT));
    expect(notice().textContent).toBe('Copied the example.');
  });

  it('without a clipboard, or when the write is refused: the text shown selected, until dismissed', async () => {
    delete clipboard.writeText;
    button(ready.id, 'copy-example').click();
    await settle();
    expect(notice().hidden).toBe(false);
    expect(notice().textContent).toContain('does not let the page copy');
    const shown = notice().find((n) => n.tag === 'code')[0]!;
    expect(shown.textContent).toBe(curlExample(ENDPOINT));
    expect(selectAllChildren).toHaveBeenLastCalledWith(shown);

    clipboard.writeText = async () => Promise.reject(new Error('Document is not focused.'));
    button(ready.id, 'copy-url').click();
    await settle();
    expect(notice().find((n) => n.tag === 'code')[0]?.textContent).toBe(ENDPOINT);

    notice().find((n) => n.tag === 'button')[0]!.click();
    expect(notice().hidden).toBe(true);
  });
});
