// The tenant page shows no control character a server sent: the bundle's app.js (as the Worker
// serves it, with ./startup.js and ./text.js beside it) runs against a small in-memory DOM and an
// API whose admission carries ESC sequences, a C1 CSI and a bidi override in every string it
// shows (name, last failure, last error, blocked pods, endpoint, tenant), and every text the page
// rendered is checked. textContent already keeps them out of the HTML; printable() keeps them off
// the screen.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ELEMENT_CLASSES, fakeDocument, type FakeNode } from '../dashboard/fake-dom.ts';
import { dashboardFiles } from './gen-dashboard.ts';

const HOSTILE = '\u001b[2J\u001b]0;owned\u0007\u009b31m\u202e';
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const document = fakeDocument();
const { getElementById } = document;

const admission = {
  id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K',
  tenant: 'acme',
  name: `chat${HOSTILE}`,
  state: 'releasing',
  spec: { replicas: 1 },
  createdAt: '2026-12-01T10:00:00.000Z',
  binding: null,
  endpoint: `http://chat${HOSTILE}.svc:8000`,
  releaseBlockedSince: '2026-12-01T10:05:00.000Z',
  releaseBlockedReason: 'PodsStillPresent',
  releaseBlockedPods: [`md-1${HOSTILE}`],
  lastError: `never Ready${HOSTILE}`,
  lastErrorCode: 'NeverReady',
  lastFailure: { reason: `CrashLoopBackOff${HOSTILE}`, pod: `md-1${HOSTILE}`, exitCode: 1, message: `"${HOSTILE}weights corrupt` },
};
const second = { ...admission, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7M', lastFailure: null };
const quota = { tenant: `acme${HOSTILE}`, resources: { cpu: { unit: 'millicores', hard: 1000, reserved: 500, active: 0, releasing: 500, blocked: 500 } } };

/** Every text a node shows: its own text and title, and its children's. */
const texts = (n: FakeNode): string[] => [n.ownText, n.title, ...n.children.flatMap(texts)].filter((t) => t !== '');

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'modeldock-page-'));
  for (const [path, file] of dashboardFiles()) {
    const target = join(dir, path === '/' ? 'index.html' : path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.body);
  }
  const g = globalThis as Record<string, unknown>;
  Object.assign(g, ELEMENT_CLASSES);
  g.document = document;
  const storage = new Map([['modeldock.key', 'k'.repeat(32)]]);
  g.sessionStorage = { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => storage.set(k, v), removeItem: (k: string) => storage.delete(k) };
  g.fetch = async (path: string) => {
    const body = path.startsWith('/quota') ? quota : { items: [admission, second], nextCursor: null };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  await import(pathToFileURL(join(dir, 'assets/app.js')).href);
  const rows = () => getElementById('admissions').tBodies[0]?.children.length ?? 0;
  for (let i = 0; i < 200 && rows() === 0; i++) await new Promise((r) => setTimeout(r, 10));
});
afterAll(() => {
  // The page's next refresh finds no key and only shows the login form.
  (globalThis as { sessionStorage?: { removeItem(k: string): void } }).sessionStorage?.removeItem('modeldock.key');
});

describe('the page shows no control character a server sent', () => {
  it('the admissions: name, failure, last error, blocked pods, endpoint', () => {
    const table = getElementById('admissions');
    expect(table.tBodies[0]?.children).toHaveLength(2);
    const shown = texts(table);
    expect(shown.join('\n')).toContain('weights corrupt');
    expect(shown.join('\n')).toContain('NeverReady: never Ready[2J]0;owned31m');
    for (const t of shown) expect(t).not.toMatch(CONTROL);
  });

  it('the tenant and the quota', () => {
    expect(getElementById('tenant').textContent).toBe('tenant acme[2J]0;owned31m');
    for (const t of texts(getElementById('quota'))) expect(t).not.toMatch(CONTROL);
  });
});
