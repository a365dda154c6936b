// An admission's `endpoint` is the URL its tenant calls the model at — on the API's own host, or
// PUBLIC_URL — once it is bound and running; null before delivery and from the delete on. The
// in-cluster address (the CR's status.endpoint) is never shown to a tenant.
import { describe, expect, it } from 'vitest';
import { createApp } from './app.ts';
import { parseKeyRing } from './auth/keys.ts';
import { parseConfig, type Env } from './config.ts';
import type { AdmissionRecord } from './db/reservations.ts';
import { fakeLedger } from './test-ledger.ts';
import { modelUrl, publicBase, shown } from './tenant-url.ts';
import { createPlacer } from '../ledger/placement.ts';

const KEY = 'acme-key-0123456789abcdef';
const READY = '01JD5Y3QW5ZC8Y1G1M5N8D4X7B';
const DELIVERED = '01JD5Y3QW5ZC8Y1G1M5N8D4X7A';
const ADMITTED = '01JD5Y3QW5ZC8Y1G1M5N8D4X79';
const DELETING = '01JD5Y3QW5ZC8Y1G1M5N8D4X78';

function setup(env: Env = {}) {
  const ledger = fakeLedger([
    { id: READY, tenant: 'acme', name: 'chat', state: 'ready', boundIn: 'md-acme' },
    { id: DELIVERED, tenant: 'acme', name: 'starting', state: 'delivered', boundIn: 'md-acme' },
    { id: ADMITTED, tenant: 'acme', name: 'queued', state: 'admitted' },
    { id: DELETING, tenant: 'acme', name: 'going', state: 'deleting', boundIn: 'md-acme' },
  ]);
  const app = createApp({
    config: parseConfig({ DATABASE_URL: 'http://u:p@127.0.0.1:1', ALLOWED_IMAGE_REGISTRIES: '*', ...env }),
    deps: () => ({ db: ledger.db, clock: () => new Date(0), newId: () => 'x', placer: createPlacer() }),
    keyRing: () => parseKeyRing(JSON.stringify({ acme: KEY })),
    rateLimiters: () => undefined,
    log: () => undefined,
  });
  const get = async (url: string) => (await app.request(url, { headers: { Authorization: `Bearer ${KEY}` } })).json();
  return { get };
}

describe('endpoint in the API', () => {
  it.each([
    [READY, `http://edge.test:8787/v1/models/${READY}`],
    [DELIVERED, `http://edge.test:8787/v1/models/${DELIVERED}`],
    [ADMITTED, null],
    [DELETING, null],
  ])('GET /requests/%s: %s (the origin the request came to)', async (id, endpoint) => {
    expect(await setup().get(`http://edge.test:8787/requests/${id}`)).toMatchObject({ id, endpoint });
  });

  it('PUBLIC_URL is the base when set, whatever host the request came to; in the list too', async () => {
    const s = setup({ PUBLIC_URL: 'https://api.example.com' });
    expect(await s.get(`http://internal.test/requests/${READY}`)).toMatchObject({ endpoint: `https://api.example.com/v1/models/${READY}` });
    const page = (await s.get('http://internal.test/requests?limit=10')) as { items: { id: string; endpoint: string | null }[] };
    expect(Object.fromEntries(page.items.map((a) => [a.id, a.endpoint]))).toEqual({
      [READY]: `https://api.example.com/v1/models/${READY}`,
      [DELIVERED]: `https://api.example.com/v1/models/${DELIVERED}`,
      [ADMITTED]: null,
      [DELETING]: null,
    });
  });

  it('never the in-cluster address', async () => {
    expect(JSON.stringify(await setup().get(`http://edge.test/requests/${READY}`))).not.toMatch(/\.svc[:/]/);
  });
});

describe('shown', () => {
  const record = (state: AdmissionRecord['state'], bound: boolean) =>
    ({ id: READY, state, binding: bound ? { namespace: 'md-acme', crName: 'md-x', uid: 'u', everReady: true, firstReadyAt: null } : null }) as AdmissionRecord;

  it.each([
    ['ready', true, true],
    ['delivered', true, true],
    ['admitted', false, false],
    ['delivered', false, false],
    ['deleting', true, false],
    ['releasing', true, false],
    ['released', true, false],
    ['conflict', true, false],
  ] as const)('%s, bound %s: an endpoint %s', (state, bound, has) => {
    expect(shown(record(state, bound), 'https://api.example.com').endpoint).toBe(has ? `https://api.example.com/v1/models/${READY}` : null);
  });

  it('publicBase: PUBLIC_URL, else the request origin; modelUrl under it', () => {
    expect(publicBase(undefined, 'http://127.0.0.1:8787/requests/x?limit=1')).toBe('http://127.0.0.1:8787');
    expect(publicBase('https://api.example.com', 'http://127.0.0.1:8787/requests/x')).toBe('https://api.example.com');
    expect(modelUrl('https://api.example.com', READY)).toBe(`https://api.example.com/v1/models/${READY}`);
  });
});
