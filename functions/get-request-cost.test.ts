// What GET /requests/:id costs the Worker in database round trips: exactly what getAdmission
// costs baseline A in B2 (bench/b2-reads.ts) — one statement, read every time — because the key is
// checked in memory (the isolate's parsed ADMISSION_KEYS_JSON, auth/keys.ts): a refused key costs
// none. B2's gap to baseline A is then the HTTP hop into workerd, not extra statements.
import { describe, expect, it } from 'vitest';
import { createApp } from './app.ts';
import { parseKeyRing } from './auth/keys.ts';
import { parseConfig } from './config.ts';
import { getAdmission } from './services/requests.ts';
import { fakeLedger, type FakeReservation } from './test-ledger.ts';
import { createPlacer } from '../ledger/placement.ts';

const KEY = 'acme-key-0123456789abcdef';
const OTHER_KEY = 'globex-key-0123456789abcdef';
const MINE = '01JD5Y3QW5ZC8Y1G1M5N8D4X7B';
const THEIRS = '01JD5Y3QW5ZC8Y1G1M5N8D4X7C';

const rows = (): FakeReservation[] => [
  { id: MINE, tenant: 'acme', name: 'chat', state: 'ready', boundIn: 'md-acme' },
  { id: THEIRS, tenant: 'globex', name: 'theirs', state: 'ready', boundIn: 'md-globex' },
];

function setup() {
  const ledger = fakeLedger(rows());
  const deps = () => ({ db: ledger.db, clock: () => new Date(0), newId: () => 'x', placer: createPlacer() });
  const app = createApp({
    config: parseConfig({ DATABASE_URL: 'http://u:p@127.0.0.1:1', ALLOWED_IMAGE_REGISTRIES: '*' }),
    deps,
    keyRing: () => parseKeyRing(JSON.stringify({ acme: KEY, globex: OTHER_KEY })),
    rateLimiters: () => undefined,
    log: () => undefined,
  });
  const get = (id: string, key = KEY) => app.request(`/requests/${id}`, { headers: { Authorization: `Bearer ${key}` } });
  return { ledger, get };
}

describe('GET /requests/:id: database round trips', () => {
  it('the statements of getAdmission and nothing else (one), again on every request', async () => {
    const baseline = fakeLedger(rows());
    await getAdmission({ db: baseline.db, clock: () => new Date(0), newId: () => 'x', placer: createPlacer() }, 'acme', MINE);
    expect(baseline.statements).toHaveLength(1);

    const s = setup();
    for (let i = 1; i <= 2; i++) {
      const res = await s.get(MINE);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(MINE);
      expect(s.ledger.statements).toEqual(Array.from({ length: i }, () => baseline.statements[0]));
    }
  });

  it.each([
    ['an unknown key', 'not-a-key-0123456789abcdef'],
    ['a malformed Authorization header', 'two words'],
  ])('%s → 401 without a statement (the key is checked in memory)', async (_what, key) => {
    const s = setup();
    expect((await s.get(MINE, key)).status).toBe(401);
    expect(s.ledger.statements).toEqual([]);
  });

  it("another tenant's admission → 404 after the same one statement (scoped by the key's tenant)", async () => {
    const s = setup();
    expect((await s.get(THEIRS)).status).toBe(404);
    expect((await s.get(THEIRS, OTHER_KEY)).status).toBe(200);
    expect(s.ledger.statements).toHaveLength(2);
  });
});
