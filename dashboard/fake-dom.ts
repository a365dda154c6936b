// An in-memory DOM just big enough to run the tenant page (public/assets/app.js) in Node: the
// elements it looks up by id, with the classes it checks them against, and nodes that keep their
// text, children, dataset, attributes and click listeners. Test support only (nothing under
// public/ imports it, so the Worker never serves it): dashboard/endpoint-cell.test.ts and
// scripts/dashboard-printable.test.ts install it as the page's globals.

import { vi } from 'vitest';

export class FakeNode {
  readonly tag: string;
  readonly children: FakeNode[] = [];
  readonly dataset: Record<string, string> = {};
  readonly attributes: Record<string, string> = {};
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
  /** Only what this node itself was given as text (not its children's). */
  get ownText(): string {
    return this.#text;
  }
  append(...nodes: FakeNode[]): void {
    this.children.push(...nodes);
  }
  replaceChildren(...nodes: FakeNode[]): void {
    this.children.splice(0, this.children.length, ...nodes);
  }
  setAttribute(k: string, v: string): void {
    this.attributes[k] = v;
  }
  addEventListener(type: string, f: () => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), f]);
  }
  removeEventListener(): void {}
  showModal(): void {}
  close(): void {}
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

export class HTMLElement extends FakeNode {}
/** The element classes the page checks its lookups against (its `$(id, type)`). */
export const ELEMENT_CLASSES = {
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
/** The class of each element of index.html the page looks up (any other id: HTMLElement). */
const IDS: Record<string, keyof typeof ELEMENT_CLASSES> = {
  quota: 'HTMLDivElement',
  admissions: 'HTMLTableElement',
  empty: 'HTMLParagraphElement',
  error: 'HTMLParagraphElement',
  updated: 'HTMLSpanElement',
  tenant: 'HTMLSpanElement',
  forget: 'HTMLButtonElement',
  'confirm-delete': 'HTMLButtonElement',
  'confirm-cancel': 'HTMLButtonElement',
  confirm: 'HTMLDialogElement',
  'key-form': 'HTMLFormElement',
  key: 'HTMLInputElement',
};

/** A document of fresh elements: each id made on its first lookup (the admissions table with its tbody). */
export function fakeDocument(): { getElementById(id: string): FakeNode; createElement(tag: string): FakeNode } {
  const byId = new Map<string, FakeNode>();
  return {
    getElementById(id) {
      let node = byId.get(id);
      if (!node) {
        node = new ELEMENT_CLASSES[IDS[id] ?? 'HTMLElement'](id);
        if (id === 'admissions') node.append(new HTMLElement('tbody'));
        byId.set(id, node);
      }
      return node;
    },
    createElement: (tag) => new HTMLElement(tag),
  };
}

export interface PageGlobals {
  /** The page's fetch: answers for /requests, /quota, /queue, … */
  fetch: (path: string, init?: RequestInit) => Promise<Response>;
  /** sessionStorage's contents (the page's key under `modeldock.key`); the page may change it. */
  storage: Map<string, string>;
  navigator?: object;
  getSelection?: () => unknown;
}

/**
 * Runs the page (public/assets/app.js) on `document`, with `g` as its globals; resolves once it
 * shows its first rows. Undo with stopPage.
 */
export async function startPage(document: ReturnType<typeof fakeDocument>, g: PageGlobals): Promise<void> {
  vi.stubGlobal('document', document);
  for (const [name, c] of Object.entries(ELEMENT_CLASSES)) vi.stubGlobal(name, c);
  vi.stubGlobal('sessionStorage', { getItem: (k: string) => g.storage.get(k) ?? null, setItem: (k: string, v: string) => g.storage.set(k, v), removeItem: (k: string) => g.storage.delete(k) });
  vi.stubGlobal('navigator', g.navigator ?? {});
  vi.stubGlobal('getSelection', g.getSelection ?? (() => null));
  vi.stubGlobal('fetch', g.fetch);
  await import('./public/assets/app.js');
  const rows = () => document.getElementById('admissions').tBodies[0]?.children ?? [];
  for (let i = 0; i < 200 && rows().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
}

/** "Forget key" stops the page's refresh timer, so nothing of the page runs once its globals are gone. */
export function stopPage(document: ReturnType<typeof fakeDocument>): void {
  document.getElementById('forget').click();
  vi.unstubAllGlobals();
}
