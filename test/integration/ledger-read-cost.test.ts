// What the tenant's reads and the cron sweep's page cost the database, counted by MariaDB itself
// (the session's Handler_read_* counters: index lookups and rows read) — a number that depends on
// the plan and the rows, not on the machine's load. A tenant with 10,000 released reservations must
// cost what a tenant with none costs: GET /quota's breakdown reads the open reservations only, a
// page of the list reads its page however deep it is, and a sweep page reads about its page however
// many released (or other tenants' open) reservations the shard holds. The same reads return the
// right rows: every page of the list and of the sweep, walked to the end, exactly once each.
// MariaDB only (the counters are the server's; the Vitess plans: test/vitess/statements.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBreakdown } from '../../functions/db/quota.ts';
import { listByTenant } from '../../functions/db/reservations.ts';
import { staleReservations, type SweepKey } from '../../functions/db/scheduled-runs.ts';
import type { Queryable } from '../../ledger/db.ts';
import { bulkId, bulkReservations, rowsRead as rowsReadOn } from '../support/bulk-reservations.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';

const RELEASED = 10_000;
const OPEN = 10;
const BUSY_OPEN = 500;
let L: LedgerDatabase;

beforeAll(async () => {
  L = await createLedgerDatabase();
  // `history`: 10,000 released, then 10 open (newer). `fresh`: the same 10 open, nothing released.
  // `busy`: 500 open of another tenant, so a read that scans by state alone would pay for them.
  await bulkReservations(L.db, { tenant: 'history', prefix: '01H0', n: RELEASED, state: 'released' });
  await bulkReservations(L.db, { tenant: 'history', prefix: '01H1', n: OPEN, state: 'ready' });
  await bulkReservations(L.db, { tenant: 'fresh', prefix: '01F1', n: OPEN, state: 'ready' });
  await bulkReservations(L.db, { tenant: 'busy', prefix: '01B1', n: BUSY_OPEN, state: 'ready' });
  await L.db.execute('ANALYZE TABLE reservation, outbox');
});
afterAll(async () => L?.drop());

const rowsRead = (read: (q: Queryable) => Promise<unknown>) => rowsReadOn(L.db, read);

describe('reads whose cost follows what is open', () => {
  it("GET /quota's breakdown: 10,000 released reservations cost nothing — the same rows read as a tenant without any", async () => {
    const history = await rowsRead((q) => readBreakdown(q, 'history'));
    const fresh = await rowsRead((q) => readBreakdown(q, 'fresh'));
    console.log(`[measure] breakdown rows read: ${history} with ${RELEASED} released, ${fresh} without`);
    expect(history).toBe(fresh);
    expect(history).toBeLessThanOrEqual(5 * OPEN);
    expect((await readBreakdown(L.db, 'history')).active).toMatchObject({ cpu: 100 * OPEN, memory: 128 * OPEN, modelservices: OPEN });
  });

  it('a page of the list reads its page, however deep its cursor; every page walked to the end returns every admission once, newest first', async () => {
    const first = await rowsRead((q) => listByTenant(q, 'history', 21));
    const deep = await rowsRead((q) => listByTenant(q, 'history', 21, bulkId('01H0', RELEASED / 2)));
    console.log(`[measure] list rows read: first page ${first}, a page ${RELEASED / 2} deep ${deep}`);
    // A row costs about 10 reads here (its binding, its change, three outbox look-ups): the deep page
    // costs what the first one does. (MariaDB left to itself reads such a page by `ref` on the tenant
    // and walks back from the newest admission to the cursor: 5,000 reservations more.)
    expect(first).toBeLessThanOrEqual(15 * 21);
    expect(deep).toBeLessThanOrEqual(first + 21);
    expect((await listByTenant(L.db, 'history', 3, bulkId('01H0', RELEASED / 2))).map((a) => a.id)).toEqual([1, 2, 3].map((k) => bulkId('01H0', RELEASED / 2 - k)));

    const seen: string[] = [];
    for (let cursor: string | undefined; ; ) {
      const page = await listByTenant(L.db, 'history', 250, cursor);
      seen.push(...page.map((a) => a.id));
      if (page.length < 250) break;
      cursor = page.at(-1)?.id;
    }
    const all = [...Array.from({ length: OPEN }, (_, i) => bulkId('01H1', OPEN - i)), ...Array.from({ length: RELEASED }, (_, i) => bulkId('01H0', RELEASED - i))];
    expect(seen).toEqual(all);
  });

  it('a page of the cron sweep reads about its page, never the released reservations; its pages walked to the end give every open reservation once', async () => {
    const future = new Date(Date.UTC(2100, 0, 1));
    const page = await rowsRead((q) => staleReservations(q, null, future, 20));
    const later = await rowsRead((q) => staleReservations(q, { state: 'ready', tenant: 'fresh', id: bulkId('01F1', 3), cluster: 'default' }, future, 20));
    console.log(`[measure] sweep page rows read: first ${page}, from a cursor ${later}`);
    expect(page).toBeLessThanOrEqual(10 * 20);
    expect(later).toBeLessThanOrEqual(10 * 20);

    const seen: SweepKey[] = [];
    for (let after: SweepKey | null = null; ; ) {
      const keys: SweepKey[] = await staleReservations(L.db, after, future, 97);
      seen.push(...keys);
      if (keys.length < 97) break;
      after = keys.at(-1) ?? null;
    }
    expect(seen.map((k) => `${k.tenant}/${k.id}`).sort()).toEqual(
      [
        ...Array.from({ length: BUSY_OPEN }, (_, i) => `busy/${bulkId('01B1', i + 1)}`),
        ...Array.from({ length: OPEN }, (_, i) => `fresh/${bulkId('01F1', i + 1)}`),
        ...Array.from({ length: OPEN }, (_, i) => `history/${bulkId('01H1', i + 1)}`),
      ].sort(),
    );
    expect(seen.every((k) => k.state === 'ready')).toBe(true);
  });
});
