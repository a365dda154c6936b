// The page's endpoint cell, run against a small in-memory DOM: an admission with an endpoint
// shows its URL and a curl command, each with a Copy button that writes exactly what is shown
// to the clipboard and says so; without a clipboard the text is shown selected, to copy by hand.
// The key the page holds appears nowhere. (The real browser, CSP and all: test/e2e/dashboard.test.ts.)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { curlExample } from './public/assets/usage.js';

const KEY = 'tenant-key-0123456789abcdef';
const ENDPOINT = 'https://api.example.test/v1/models/01JD5Y3QW5ZC8Y1G1M5N8D4X7K';

class FakeNode {
  readonly tag: string;
  readonly children: FakeNode[] = [];
  readonly dataset: Record<string, string> = {};
  readonly listeners = new Map<string, (() => void)[]>();
  className = '';
  title = '';
  hidden = false;
  type = '';
  value: unknown = '';
  #text = '';
  constructor(tag: string) {
    this.tag = tag;
  }
  get textContent(): string {
    return this.#text + this.children.map((c) => c.textContent).join('');
  }
  set textContent(t: string) {
    this.#text = t;
    this.children.length = 0;
  }
  append(...nodes: FakeNode[]): void {
    this.children.push(...nodes);
  }
  replaceChildren(...nodes: FakeNode[]): void {
    this.children.splice(0, this.children.length, ...nodes);
  }
  setAttribute(): void {}
  addEventListener(type: string, f: () => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), f]);
  }
  removeEventListener(): void {}
  click(): void {
    for (const f of this.listeners.get('click') ?? []) f();
  }
  get tBodies(): FakeNode[] {
    return this.children.filter((c) => c.tag === 'tbody');
  }
  /** Every node below this one (depth first) that `match` accepts. */
  find(match: (n: FakeNode) => boolean): FakeNode[] {
    return this.children.flatMap((c) => [...(match(c) ? [c] : []), ...c.find(match)]);
  }
}
class HTMLElement extends FakeNode {}
const classes = {
  HTMLElement,
  HTMLDivElement: class extends HTMLElement {},
  HTMLTableElement: class extends HTMLElement {},
  HTMLParagraphElement: class extends HTMLElement {},
  HTMLSpanElement: class extends HTMLElement {},
  HTMLButtonElement: class extends HTMLElement {},
  HTMLDialogElement: class extends HTMLElement {},
  HTMLFormElement: class extends HTMLElement {},
  HTMLInputElement: class extends HTMLElement {},
};
const IDS: Record<string, keyof typeof classes> = {
  quota: 'HTMLDivElement',
  admissions: 'HTMLTableElement',
  empty: 'HTMLParagraphElement',
  error: 'HTMLParagraphElement',
  updated: 'HTMLSpanElement',
  tenant: 'HTMLSpanElement',
  forget: 'HTMLButtonElement',
  'key-form': 'HTMLFormElement',
  key: 'HTMLInputElement',
};
const byId = new Map<string, FakeNode>();
function getElementById(id: string): FakeNode {
  let node = byId.get(id);
  if (!node) {
    node = new classes[IDS[id] ?? 'HTMLElement'](id);
    if (id === 'admissions') node.append(new HTMLElement('tbody'));
    byId.set(id, node);
  }
  return node;
}

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
  vi.stubGlobal('document', { getElementById, createElement: (tag: string) => new HTMLElement(tag) });
  for (const [name, c] of Object.entries(classes)) vi.stubGlobal(name, c);
  vi.stubGlobal('sessionStorage', { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => storage.set(k, v), removeItem: (k: string) => storage.delete(k) });
  vi.stubGlobal('navigator', { clipboard });
  vi.stubGlobal('getSelection', () => ({ selectAllChildren }));
  vi.stubGlobal('fetch', async (path: string) => {
    const body = path.startsWith('/quota') ? { tenant: 'acme', resources: {} } : { items: [ready, delivered, admitted], nextCursor: null };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  });
  await import('./public/assets/app.js');
  for (let i = 0; i < 200 && rows().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
});
afterAll(() => {
  // "Forget key" stops the page's refresh timer: nothing of the page runs once the globals are gone.
  getElementById('forget').click();
  expect(storage.size).toBe(0);
  vi.unstubAllGlobals();
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
