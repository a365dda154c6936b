// The controller's ledger writes against the real ledger through the production driver (MariaDB,
// or the 2-shard Vitess keyspace with MODELDOCK_LEDGER_BACKEND=vitess):
// epoch fencing, guarded transitions, and the exactly-once release transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../ledger/db.ts';
import { chargeQuota } from '../../ledger/charge.ts';
import { insertReservation } from '../../functions/db/reservations.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { loadReservationRecord } from '../../controller/reservation/record.ts';
import { resyncOnce } from '../../controller/reservation/resync.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { markReady, recordProgress, transition } from '../../controller/reservation/transitions.ts';
import { release } from '../../controller/reservation/quota-moves.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { insertMovement } from '../../ledger/movements.ts';

let ledger: LedgerDatabase;
let db: Db;
beforeAll(async () => {
  ledger = await createLedgerDatabase();
  db = ledger.db;
  await ledger.setQuota('acme', 'cpu=1000', 'memory=1000000Mi', 'nvidia.com/gpu=100');
});
afterAll(async () => ledger?.drop());

let seq = 0;
const at = (id: string) => ({ tenant: 'acme', id });
async function admitted(state: 'admitted' | 'releasing' | 'delivered' = 'admitted'): Promise<string> {
  const id = `01TEST${String(++seq).padStart(20, '0')}`;
  const amounts = { cpu: 1500, memory: 2048, 'nvidia.com/gpu': 1, modelservices: 1 };
  const now = new Date();
  await db.transaction(async (tx) => {
    expect(await chargeQuota(tx, 'acme', amounts, now)).toBe(true);
    await insertReservation(tx, {
      id,
      tenant: 'acme',
      idempotencyKey: id,
      requestHash: 'h'.repeat(64),
      name: 'm',
      spec: { image: 'x/y:1', replicas: 1, port: 8000, resources: { cpu: '1500m', memory: '2Gi', 'nvidia.com/gpu': '1' }, env: [], args: [], readinessPath: '/healthz' },
      amounts,
      requestId: 'req-1',
      now,
    });
    await insertMovement(tx, { reservationId: id, tenant: 'acme', generation: 1, direction: 'charge', amounts, now });
  });
  if (state !== 'admitted') await db.execute('UPDATE reservation SET state = ? WHERE tenant = ? AND id = ?', [state, 'acme', id]);
  return id;
}

const used = async () => {
  const r = await db.execute(`SELECT resource, used FROM tenant_quota WHERE tenant = 'acme' ORDER BY resource`);
  return Object.fromEntries(r.rows.map((row) => [row.resource, Number(row.used)]));
};
const movements = async (id: string) =>
  (await db.execute('SELECT direction FROM quota_movement WHERE reservation_id = ? ORDER BY direction', [id])).rows.map(
    (r) => r.direction,
  );

/** The binding ackCreate would have written for `id`. */
const bind = (id: string, now: Date) =>
  db.execute(`INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, created_at, updated_at) VALUES ('acme', ?, 'ns', ?, 'u1', ?, ?)`, [id, `md-${id.toLowerCase()}`, now, now]);

describe('controller ledger store', () => {
  it('acquireEpoch bumps the fencing token each time', async () => {
    const a = await acquireEpoch(db, 'default', 'ctl-a', new Date());
    const b = await acquireEpoch(db, 'default', 'ctl-b', new Date());
    expect(b).toBe(a + 1);
  });

  it('release moves releasing → released once, writes one release row and gives the quota back', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    const before = await used();
    const id = await admitted('releasing');
    expect((await used()).cpu).toBe(before.cpu! + 1500);

    expect(await release(db, at(id), epoch, new Date())).toBe(true);
    expect(await release(db, at(id), epoch, new Date())).toBe(false); // twice changes nothing
    expect(await used()).toEqual(before);
    expect(await movements(id)).toEqual(['charge', 'release']);
    expect((await loadReservationRecord(db, at(id)))?.state).toBe('released');
  });

  it('concurrent releases of one reservation: exactly one succeeds', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    const before = await used();
    const id = await admitted('releasing');
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => release(db, at(id), epoch, new Date())));
    const won = results.filter((r) => r.status === 'fulfilled' && r.value === true);
    expect(won).toHaveLength(1);
    expect(await used()).toEqual(before);
    expect(await movements(id)).toEqual(['charge', 'release']);
  });

  it('a deposed leader (stale epoch) changes nothing', async () => {
    const old = await acquireEpoch(db, 'default', 'old', new Date());
    const id = await admitted('releasing');
    const charged = await used();
    await acquireEpoch(db, 'default', 'new', new Date());
    expect(await release(db, at(id), old, new Date())).toBe(false);
    expect(await transition(db, at(id), ['releasing'], 'conflict', old, new Date(), 'late')).toBe(false);
    expect(await used()).toEqual(charged);
    expect(await movements(id)).toEqual(['charge']);
    expect((await loadReservationRecord(db, at(id)))?.state).toBe('releasing');
  });

  it('release refuses a reservation that is not releasing', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    const id = await admitted('delivered');
    expect(await release(db, at(id), epoch, new Date())).toBe(false);
    expect(await movements(id)).toEqual(['charge']);
  });

  it('markReady records the first Ready on the binding, once', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    const id = await admitted('delivered');
    const now = new Date();
    await bind(id, now);
    expect(await markReady(db, at(id), epoch, now)).toBe(true);
    expect(await markReady(db, at(id), epoch, new Date(now.getTime() + 5000))).toBe(false);
    const rec = await loadReservationRecord(db, at(id));
    expect(rec?.state).toBe('ready');
    expect(rec?.binding).toMatchObject({ uid: 'u1', everReady: true, firstReadyAt: new Date(now.toISOString()) });
  });

  it('recordProgress: times are set once, the last failure is replaced, and the record reads them back', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    const id = await admitted('delivered');
    const now = new Date();
    await bind(id, now);
    const t1 = new Date('2026-01-01T00:00:01Z');
    const t2 = new Date('2026-01-01T00:00:02Z');
    const oom = { reason: 'OOMKilled', message: 'x'.repeat(5000), pod: 'p', container: 'model', exitCode: 137, at: '2026-01-01T00:00:03Z' };
    expect(await recordProgress(db, at(id), { scheduledAt: t1, startedAt: null, lastFailure: oom }, epoch, now)).toBe(true);
    expect(await recordProgress(db, at(id), { scheduledAt: t2, startedAt: t2, lastFailure: null }, epoch, now)).toBe(true);
    const rec = await loadReservationRecord(db, at(id));
    // The message is cut so the failure's JSON fits the column (VARCHAR(4096)).
    const kept = rec?.binding?.lastFailure?.message ?? '';
    expect(kept.length).toBeGreaterThan(3900);
    expect(rec?.binding).toMatchObject({ scheduledAt: t1, startedAt: t2, lastFailure: { ...oom, message: 'x'.repeat(kept.length) } });
    // A tenant's termination message of 2,048 quotes (4,096 characters once escaped) is stored too, cut to fit.
    const quotes = { ...oom, message: '"'.repeat(2048) };
    expect(await recordProgress(db, at(id), { scheduledAt: null, startedAt: null, lastFailure: quotes }, epoch, now)).toBe(true);
    expect((await loadReservationRecord(db, at(id)))?.binding?.lastFailure?.message).toMatch(/^"{1900,2047}$/);
    const crash = { reason: 'CrashLoopBackOff', message: 'back-off', pod: 'p', container: 'model', exitCode: 1 };
    await recordProgress(db, at(id), { scheduledAt: null, startedAt: null, lastFailure: crash }, epoch, now);
    expect((await loadReservationRecord(db, at(id)))?.binding?.lastFailure).toEqual(crash);
  });
});

describe('the resync\'s pages (openReservationsPage)', () => {
  it("stalest first — the never reconciled, then by last_reconciled_at and id — each open one once across pages; released, freshly reconciled and other clusters' ones not", async () => {
    const base = Date.now() - 3_600_000;
    const reconciledAt = (id: string, ms: number) => db.execute('UPDATE reservation SET last_reconciled_at = ? WHERE tenant = ? AND id = ?', [new Date(ms), 'acme', id]);
    const never = [await admitted(), await admitted()];
    const late = await admitted('delivered');
    const early = await admitted('delivered');
    const tieA = await admitted('delivered');
    const tieB = await admitted('delivered');
    const gone = await admitted('delivered');
    const fresh = await admitted('delivered');
    await reconciledAt(late, base + 2_000);
    await reconciledAt(early, base);
    await reconciledAt(tieA, base + 1_000);
    await reconciledAt(tieB, base + 1_000);
    await reconciledAt(gone, base);
    await db.execute(`UPDATE reservation SET state = 'released' WHERE tenant = 'acme' AND id = ?`, [gone]);
    await reconciledAt(fresh, Date.now() + 3_600_000); // looked at after the pass began
    // Placed on another cluster: that cluster's controller resyncs them (one never reconciled, one stale).
    const elsewhere = [await admitted(), await admitted('delivered')];
    await reconciledAt(elsewhere[1]!, base - 1_000);
    await db.execute(`UPDATE reservation SET cluster = 'c-other' WHERE tenant = 'acme' AND id IN (?)`, [elsewhere]);

    const seen: string[] = [];
    const { pages } = await resyncOnce({ cluster: 'default', shards: () => ledgerShards(db), enqueue: (k) => seen.push(k.id), pageSize: 2, now: () => new Date() }, new AbortController().signal);
    const mine = new Set([...never, late, early, tieA, tieB, gone, fresh, ...elsewhere]);
    expect(seen.filter((id) => mine.has(id))).toEqual([...never, early, tieA, tieB, late]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBeGreaterThanOrEqual(4); // pages of 2: the walk crossed pages and the never → reconciled boundary
  });
});

