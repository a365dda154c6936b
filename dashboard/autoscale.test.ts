// An admission that autoscales, on the page, run against the small in-memory DOM: "auto min–max:
// desired D, charged C" under its replicas, a badge per condition of the autoscaler (QuotaLimited,
// MetricsUnavailable, Panic) with its message as the title, and its last change with the reason
// as the title. One that does not autoscale shows none of it. (The real browser: test/e2e/dashboard.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeDocument, startPage, stopPage, type FakeNode } from './fake-dom.ts';
import { autoscaleText, conditionBadges, decisionText } from './public/assets/autoscale.js';

const document = fakeDocument();
const { getElementById } = document;

const range = { minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 };
const decision = { at: '2026-12-01T10:04:00.000Z', fromReplicas: 2, toReplicas: 3, desiredReplicas: 4, reason: 'scale-up: load 35 asks for 4 replicas: scaling up from 2' };
const quotaLimited = { type: 'QuotaLimited', reason: 'QuotaShort', message: 'the load asks for 4 replicas; the quota is short: cpu 500 requested, 0 available', since: '2026-12-01T10:04:00.000Z' };
const metricsUnavailable = { type: 'MetricsUnavailable', reason: 'Holding', message: 'no ready pod to read the load from', since: '2026-12-01T10:04:10.000Z' };
const panic = { type: 'Panic', reason: 'LoadBurst', message: 'panic window load 80 asks for 8 replicas', since: '2026-12-01T10:04:20.000Z' };
const status = { desiredReplicas: 4, load: 35, panic: true, lastDecision: decision, conditions: [panic, quotaLimited, metricsUnavailable], observedAt: '2026-12-01T10:04:30.000Z' };

const base = { createdAt: '2026-12-01T10:00:00.000Z', binding: null, releaseBlockedSince: null, lastError: null, endpoint: null, state: 'ready', pendingChange: null };
const busy = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7A', name: 'busy', spec: { replicas: 3, autoscale: range }, replicas: 3, chargedReplicas: 3, autoscaleStatus: status };
const fresh = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7B', name: 'fresh', spec: { replicas: 1, autoscale: range }, replicas: 1, chargedReplicas: 1, autoscaleStatus: null };
const fixed = { ...base, id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7C', name: 'fixed', spec: { replicas: 2 }, replicas: 2, chargedReplicas: 2, autoscaleStatus: null };
const HOSTILE = '\u001b[2J\u009b31m\u202e';
const hostile = {
  ...busy,
  id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7D',
  autoscaleStatus: { ...status, lastDecision: { ...decision, reason: `scale-up${HOSTILE}` }, conditions: [{ ...panic, type: `Panic${HOSTILE}`, message: `burst${HOSTILE}` }] },
};
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const storage = new Map([['modeldock.key', 'tenant-key-0123456789abcdef']]);

const rows = () => getElementById('admissions').tBodies[0]?.children ?? [];
const row = (id: string) => rows().find((r) => r.dataset.id === id)!;
const byClass = (n: FakeNode, className: string) => n.find((c) => c.className.split(' ').includes(className));

beforeAll(async () => {
  await startPage(document, {
    storage,
    fetch: async (path: string) => {
      const body = path.startsWith('/quota') ? { tenant: 'acme', resources: {} } : { items: [busy, fresh, fixed, hostile], nextCursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    },
  });
});

afterAll(() => stopPage(document));


describe('the autoscaling texts', () => {
  it('range, desired and charged; desired unknown before the first reading', () => {
    expect(autoscaleText(range, status, 3)).toBe('auto 1–8: desired 4, charged 3');
    expect(autoscaleText(range, null, 1)).toBe('auto 1–8: desired not known yet, charged 1');
    expect(autoscaleText(range, { ...status, desiredReplicas: 0 }, undefined)).toBe('auto 1–8: desired 0, charged ?');
    expect(autoscaleText(range, { ...status, readyReplicas: 2 }, 3)).toBe('auto 1–8: desired 4, charged 3, ready 2');
  });
  it('badges in a fixed order, each titled with its message (else its reason)', () => {
    expect(conditionBadges(status)).toEqual([
      { type: 'QuotaLimited', title: quotaLimited.message },
      { type: 'MetricsUnavailable', title: metricsUnavailable.message },
      { type: 'Panic', title: panic.message },
    ]);
    expect(conditionBadges({ conditions: [{ type: 'Panic', reason: 'LoadBurst', message: '' }] })).toEqual([{ type: 'Panic', title: 'LoadBurst' }]);
    expect(conditionBadges(null)).toEqual([]);
  });
  it('the last change, with what the load asked for when it got less', () => {
    expect(decisionText(status, (iso) => `<${iso}>`)).toBe('last change 2 → 3 (asked for 4) at <2026-12-01T10:04:00.000Z>');
    expect(decisionText({ lastDecision: { ...decision, desiredReplicas: 3 } }, String)).toBe('last change 2 → 3 at 2026-12-01T10:04:00.000Z');
    expect(decisionText({ lastDecision: null }, String)).toBeNull();
    expect(decisionText(null, String)).toBeNull();
  });
});

describe('an autoscaled admission on the page', () => {
  it('shows the range, desired and charged under its replicas', () => {
    const name = row(busy.id).children[0]!;
    expect(byClass(name, 'replicas')[0]?.textContent).toBe('3 replicas');
    expect(byClass(name, 'auto')[0]?.textContent).toBe('auto 1–8: desired 4, charged 3');
    expect(byClass(row(fresh.id).children[0]!, 'auto')[0]?.textContent).toBe('auto 1–8: desired not known yet, charged 1');
  });
  it('a badge per condition with its message as the title', () => {
    const badges = byClass(row(busy.id), 'badge');
    expect(badges.map((b) => [b.textContent, b.title, b.className])).toEqual([
      ['QuotaLimited', quotaLimited.message, 'badge badge-QuotaLimited'],
      ['MetricsUnavailable', metricsUnavailable.message, 'badge badge-MetricsUnavailable'],
      ['Panic', panic.message, 'badge badge-Panic'],
    ]);
    expect(byClass(row(fresh.id), 'badge')).toEqual([]);
  });
  it('the last change, its reason as the title; none before the first', () => {
    const [line] = byClass(row(busy.id), 'decision');
    expect(line?.textContent).toBe(`last change 2 → 3 (asked for 4) at ${new Date(decision.at).toLocaleTimeString()}`);
    expect(line?.title).toBe(decision.reason);
    expect(byClass(row(fresh.id), 'decision')).toEqual([]);
  });
  it('no control character a server sent in a badge, a title or the last change; an unknown condition is badged as other', () => {
    const box = byClass(row(hostile.id), 'autoscale')[0]!;
    const [badge] = byClass(box, 'badge');
    expect([badge?.textContent, badge?.title, badge?.className]).toEqual(['Panic[2J31m', 'burst[2J31m', 'badge badge-other']);
    expect(byClass(box, 'decision')[0]?.title).toBe('scale-up[2J31m');
    const shown = (n: FakeNode): string[] => [n.ownText, n.title, ...n.children.flatMap(shown)];
    for (const t of shown(box)) expect(t).not.toMatch(CONTROL);
  });
  it('nothing of it for an admission that does not autoscale', () => {
    const r = row(fixed.id);
    expect(byClass(r, 'autoscale')).toEqual([]);
    expect(byClass(r.children[0]!, 'replicas')[0]?.textContent).toBe('2 replicas');
  });
});
