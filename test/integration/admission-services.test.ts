// The admission services against the real database (MariaDB through ps-http-sim, with the
// production driver), called directly in Node: migrations, round trips per admission,
// all-or-nothing quota, 100 concurrent admissions, a lost COMMIT reply, delete, quota, sweep.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionOf } from '../support/policy.ts';
import type { DbFetch } from '../../ledger/db.ts';
import { admit } from '../../functions/services/admit.ts';
import { deleteAdmission, getAdmission, listAdmissions } from '../../functions/services/requests.ts';
import { getQuota } from '../../functions/services/quota.ts';
import { readQuota, setHard } from '../../functions/db/quota.ts';
import { backfillCount } from '../../scripts/tenant.ts';
import { sweep } from '../../functions/services/sweep.ts';
import { ledgerShards } from '../../ledger/shards.ts';
import { ApiError } from '../../functions/errors.ts';
import { loadMigrations, migrate } from '../../ledger/migrate.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { rejection } from '../support/rejection.ts';
import { countingFetch } from '../support/counting-fetch.ts';
import { createPlacer } from '../../ledger/placement.ts';

let L: LedgerDatabase;
beforeAll(async () => {
  L = await createLedgerDatabase();
});
afterAll(async () => L?.drop());

const request = (over: Record<string, unknown> = {}) =>
  admissionOf({ name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 1, resources: { cpu: '1', memory: '1Gi' }, ...over });

let keySeq = 0;
const input = (tenant: string, over: Record<string, unknown> = {}, key = `k-${++keySeq}`) => ({
  tenant,
  idempotencyKey: key,
  requestId: `req-${keySeq}`,
  parsed: request(over),
});

describe('migrations', () => {
  it('are idempotent and recorded', async () => {
    const again = await migrate(L.db);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(loadMigrations().map((m) => m.name));
    expect(await L.count('SELECT COUNT(*) FROM schema_migrations')).toBe(loadMigrations().length);
  });

  it('re-run a migration whose ALTER … ADD took effect before a crash, before it was recorded', async () => {
    const last = loadMigrations().find((m) => m.statements.some((st) => /^ALTER TABLE/i.test(st)));
    if (!last) throw new Error('no ALTER migration');
    await L.db.execute('DELETE FROM schema_migrations WHERE version = ?', [last.version]); // the crash: DDL done, not recorded
    const r = await migrate(L.db);
    expect(r.applied).toEqual([last.name]);
    expect(await L.count('SELECT COUNT(*) FROM schema_migrations')).toBe(loadMigrations().length);
  });

  it('refuse an applied migration whose text changed', async () => {
    const [first] = loadMigrations();
    if (!first) throw new Error('no migrations');
    await expect(migrate(L.db, [{ ...first, checksum: 'f'.repeat(64) }])).rejects.toThrow(/changed after it was applied/);
  });
});

describe('admit', () => {
  it('costs 6 database round trips: BEGIN, 4 statements, COMMIT (no cluster registered; the placer warm)', async () => {
    await L.setQuota('rt', 'cpu=4', 'memory=8Gi');
    const { calls, fetch } = countingFetch();
    // One placer per isolate: its first admission also reads the shard list, the rooms and whether a cluster is registered (cached after).
    const deps = { ...L.deps({ fetch }), placer: createPlacer({ roomsTtlMs: 600_000 }) };
    await admit(deps, input('rt'));
    expect(calls).toEqual(['SHOW', 'SELECT', 'SELECT', 'BEGIN', 'INSERT', 'INSERT', 'INSERT', 'UPDATE', 'COMMIT']);
    calls.length = 0;
    const r = await admit(deps, input('rt'));
    expect(r.outcome).toBe('created');
    expect(calls).toEqual(['BEGIN', 'INSERT', 'INSERT', 'INSERT', 'UPDATE', 'COMMIT']);
    expect(calls.length).toBeLessThanOrEqual(6);
    console.log(`[measure] round trips per admission: ${calls.length} (${calls.join(', ')})`);
  });

  it('charges TOTAL amounts (per replica × replicas), writes reservation, charge and outbox create', async () => {
    await L.setQuota('tot', 'cpu=8', 'memory=16Gi', 'nvidia.com/gpu=4');
    const r = await admit(L.deps(), input('tot', { replicas: 3, resources: { cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '1' } }));
    expect(r.admission.amounts).toEqual({ cpu: 1500, memory: 3072, 'nvidia.com/gpu': 3, modelservices: 1 });
    expect(r.admission.state).toBe('admitted');
    expect(r.admission.crName).toBe(`md-${r.admission.id.toLowerCase()}`);
    const id = r.admission.id;
    expect(await L.count('SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = ?', [id, 'charge'])).toBe(1);
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'create' AND done_at IS NULL", [id])).toBe(1);
    const q = await getQuota(L.deps(), 'tot');
    expect(q.resources.cpu).toMatchObject({ hard: 8000, reserved: 1500, active: 1500, releasing: 0, blocked: 0, available: 6500 });
    expect(q.resources.memory).toMatchObject({ hard: 16384, reserved: 3072, active: 3072 });
    expect(q.resources['nvidia.com/gpu']).toMatchObject({ hard: 4, reserved: 3, active: 3 });
    expect(q.resources.modelservices).toMatchObject({ unit: 'count', hard: 20, reserved: 1, active: 1 });
    // The stored spec is the canonical CR spec, read back identically.
    expect((await getAdmission(L.deps(), 'tot', id)).spec).toEqual(r.admission.spec);
  });

  it('is all-or-nothing: one short resource → 409 naming it and by how much; nothing charged', async () => {
    await L.setQuota('aon', 'cpu=4', 'memory=1Gi');
    const before = await L.fingerprint();
    const err = await rejection(admit(L.deps(), input('aon', { replicas: 2, resources: { cpu: '1', memory: '1Gi' } })));
    expect(err.status).toBe(409);
    expect(err.code).toBe('quota_exceeded');
    expect(err.details).toEqual({ shortfalls: [{ resource: 'memory', requested: 2048, available: 1024, short: 1024 }] });
    expect(err.message).toMatch(/memory short by 1024/);
    expect(await L.fingerprint()).toBe(before);
  });

  it('treats a missing quota row as 0 and names every short resource', async () => {
    const err = await rejection(admit(L.deps(), input('nobody', { resources: { cpu: '250m', memory: '256Mi', 'nvidia.com/gpu': '1' } })));
    expect(err.status).toBe(409);
    expect(err.details).toEqual({
      shortfalls: [
        { resource: 'cpu', requested: 250, available: 0, short: 250 },
        { resource: 'memory', requested: 256, available: 0, short: 256 },
        { resource: 'nvidia.com/gpu', requested: 1, available: 0, short: 1 },
        { resource: 'modelservices', requested: 1, available: 0, short: 1 },
      ],
    });
  });

  it('same key + same body → the same admission; same key + different body → 422', async () => {
    await L.setQuota('idem', 'cpu=10', 'memory=10Gi');
    const first = await admit(L.deps(), input('idem', {}, 'same'));
    const again = await admit(L.deps(), input('idem', {}, 'same'));
    expect(again.outcome).toBe('replayed');
    expect(again.admission.id).toBe(first.admission.id);
    const err = await rejection(admit(L.deps(), input('idem', { replicas: 2 }, 'same')));
    expect(err.status).toBe(422);
    // The same key for ANOTHER tenant is another admission.
    await L.setQuota('idem2', 'cpu=10', 'memory=10Gi');
    const other = await admit(L.deps(), input('idem2', {}, 'same'));
    expect(other.outcome).toBe('created');
    expect(await L.count("SELECT COUNT(*) FROM quota_movement m JOIN reservation r ON r.id = m.reservation_id WHERE r.tenant = 'idem'")).toBe(1);
  });

  it('10 concurrent retries with the same key and body → one admission (one 201, nine replays), one charge', async () => {
    await L.setQuota('race', 'cpu=10', 'memory=10Gi');
    const results = await Promise.all(Array.from({ length: 10 }, () => admit(L.deps(), input('race', {}, 'race-key'))));
    expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
    expect(new Set(results.map((r) => r.admission.id)).size).toBe(1);
    expect(await L.count("SELECT COUNT(*) FROM quota_movement WHERE tenant = 'race'")).toBe(1);
    expect((await getQuota(L.deps(), 'race')).resources.cpu.reserved).toBe(1000);
  });

  it('100 concurrent admissions for a quota that fits exactly 10 → exactly 10 admitted; used = Σ active', async () => {
    await L.setQuota('burst', 'cpu=10', 'memory=10Gi');
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => admit(L.deps(), input('burst', { name: `m${i}`, resources: { cpu: '1', memory: '1Gi' } }))),
    );
    const admitted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as unknown);
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(90);
    for (const e of refused) expect(e instanceof ApiError && e.status === 409 ? 409 : e).toBe(409);
    const q = await getQuota(L.deps(), 'burst');
    expect(q.resources.cpu).toMatchObject({ hard: 10_000, reserved: 10_000, active: 10_000 });
    expect(q.resources.memory).toMatchObject({ hard: 10_240, reserved: 10_240, active: 10_240 });
    expect(await L.count("SELECT COUNT(*) FROM reservation WHERE tenant = 'burst'")).toBe(10);
    expect(await L.count("SELECT COUNT(*) FROM quota_movement WHERE tenant = 'burst'")).toBe(10);
    console.log(`[measure] service-level concurrency: 100 concurrent → ${admitted.length} admitted, ${refused.length} × 409`);
  });

  it('a lost COMMIT reply, then a retry with the same key → one reservation, one charge', async () => {
    await L.setQuota('lost', 'cpu=4', 'memory=4Gi');
    // COMMIT reaches the database and commits; its reply is lost on the way back.
    const { calls, fetch } = countingFetch((sql, res) => {
      if (sql === 'COMMIT') throw new TypeError('fetch failed: connection reset (injected after COMMIT)');
      return res;
    });
    const err = await rejection(admit(L.deps({ fetch }), input('lost', {}, 'lost-commit')));
    expect(err.status).toBe(503);
    expect(calls).toContain('COMMIT');
    const retry = await admit(L.deps(), input('lost', {}, 'lost-commit'));
    expect(retry.outcome).toBe('replayed');
    expect(await L.count("SELECT COUNT(*) FROM reservation WHERE tenant = 'lost'")).toBe(1);
    expect(await L.count("SELECT COUNT(*) FROM quota_movement WHERE tenant = 'lost' AND direction = 'charge'")).toBe(1);
    expect(await L.count("SELECT COUNT(*) FROM outbox o JOIN reservation r ON r.id = o.reservation_id WHERE r.tenant = 'lost'")).toBe(1);
    expect((await getQuota(L.deps(), 'lost')).resources.cpu.reserved).toBe(1000);
  });

  it('maps an unreachable database to 503 and changes nothing', async () => {
    const down: DbFetch = () => Promise.reject(new TypeError('fetch failed: ECONNREFUSED'));
    const err = await rejection(admit(L.deps({ fetch: down }), input('rt')));
    expect(err.status).toBe(503);
    expect(err.code).toBe('database_unavailable');
  });
});

describe('read, list, delete', () => {
  it('scopes every read by tenant, lists newest first with a cursor, deletes idempotently', async () => {
    await L.setQuota('own', 'cpu=10', 'memory=10Gi');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await admit(L.deps(), input('own', { name: `s${i}` }))).admission.id);
    const page1 = await listAdmissions(L.deps(), 'own', { limit: 2 });
    expect(page1.items.map((a) => a.id)).toEqual([ids[4], ids[3]]);
    const page2 = await listAdmissions(L.deps(), 'own', { limit: 2, cursor: page1.nextCursor ?? undefined });
    expect(page2.items.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    const page3 = await listAdmissions(L.deps(), 'own', { limit: 2, cursor: page2.nextCursor ?? undefined });
    expect(page3.items.map((a) => a.id)).toEqual([ids[0]]);
    expect(page3.nextCursor).toBeNull();

    const id = ids[0] ?? '';
    expect((await rejection(getAdmission(L.deps(), 'someone-else', id))).status).toBe(404);
    expect((await rejection(deleteAdmission(L.deps(), 'someone-else', id, 'r'))).status).toBe(404);

    const d1 = await deleteAdmission(L.deps(), 'own', id, 'del-1');
    expect(d1.state).toBe('deleting');
    // The answer is built from the first read and the transaction's changes: exactly what a read says now.
    expect(d1).toEqual(await getAdmission(L.deps(), 'own', id));
    const d2 = await deleteAdmission(L.deps(), 'own', id, 'del-2');
    expect(d2.state).toBe('deleting');
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE reservation_id = ? AND kind = 'delete'", [id])).toBe(1);
    const q = await getQuota(L.deps(), 'own');
    expect(q.resources.cpu).toMatchObject({ reserved: 5000, active: 4000, releasing: 1000, blocked: 0 });
    // blocked is read from release_blocked_since (set by the controller).
    await L.db.execute("UPDATE reservation SET state = 'releasing', release_blocked_since = UTC_TIMESTAMP(3) WHERE tenant = 'own' AND id = ?", [id]);
    expect((await getQuota(L.deps(), 'own')).resources.cpu).toMatchObject({ releasing: 1000, blocked: 1000 });
  });
});

describe('sweep (scheduled)', () => {
  it('enqueues one reconcile row per stale non-terminal reservation, once per scheduledTime, within budget', async () => {
    await L.setQuota('sw', 'cpu=100', 'memory=100Gi');
    for (let i = 0; i < 7; i++) await admit(L.deps(), input('sw', { name: `w${i}` }));
    // Leave only this tenant's reservations in scope: mark the others reconciled just now.
    await L.onEveryShard("UPDATE reservation SET last_reconciled_at = '2100-01-01 00:00:00' WHERE tenant <> 'sw'");
    const opts = { cron: '*/5 * * * *', staleAfterMs: 0, pageSize: 3, maxStatements: 40, holder: 'h1' };
    const later = () => new Date(Date.now() + 1000);
    const first = await sweep(L.deps({ clock: later }), { ...opts, scheduledTime: 1_000 });
    const shards = (await ledgerShards(L.db)).length;
    expect(first).toMatchObject({ claimed: true, enqueued: 7, complete: true, pages: 3 + (shards - 1) }); // 3 pages on sw's shard, 1 on each other
    const second = await sweep(L.deps({ clock: later }), { ...opts, scheduledTime: 1_000, holder: 'h2' });
    expect(second).toMatchObject({ claimed: false, enqueued: 0 });
    // A new scheduledTime does not duplicate pending rows either.
    const third = await sweep(L.deps({ clock: later }), { ...opts, scheduledTime: 2_000 });
    expect(third).toMatchObject({ claimed: true, enqueued: 0 });
    expect(await L.count("SELECT COUNT(*) FROM outbox WHERE kind = 'reconcile' AND tenant = 'sw'")).toBe(7);
    // Budget: 7 round trips allow claim + the shard list + the clusters (none overdue, none to roll
    // forward: one read each) + one page (select + insert) + finish, so only 3 rows this run (on
    // MariaDB; a shard-targeted select costs 2, so on Vitess less is done).
    // Only this tenant's rows are marked done: a reservation of another test that waits on its own
    // pending reconcile row (one whose every other row is dead) stays out of this page.
    await L.onEveryShard("UPDATE outbox SET dedupe_key = NULL, done_at = UTC_TIMESTAMP(3) WHERE kind = 'reconcile' AND tenant = 'sw'");
    // The budget is what the run really sends: every HTTP request to the database is counted (a
    // fresh placer, its caches cold, as in a new isolate), and the run's own count is never below it.
    const counted = countingFetch();
    const tight = await sweep(L.deps({ clock: later, fetch: counted.fetch }), { ...opts, scheduledTime: 3_000, maxStatements: 7 });
    expect(tight).toMatchObject({ claimed: true, complete: false, purged: 0 });
    expect(counted.calls.length).toBeLessThanOrEqual(tight.statements);
    expect(tight.statements).toBeLessThanOrEqual(7);
    if (L.backend === 'mariadb') expect(tight).toMatchObject({ enqueued: 3, statements: 7 });
  });

  it('re-enqueues an admitted reservation whose every outbox row is dead, however recently reconciled; not one with a live row', async () => {
    await L.setQuota('sd', 'cpu=10', 'memory=10Gi');
    const dead = (await admit(L.deps(), input('sd', { name: 'dead' }))).admission.id;
    const live = (await admit(L.deps(), input('sd', { name: 'live' }))).admission.id;
    // Both were looked at just now (the resync touches admitted reservations too), so staleness alone selects neither.
    await L.db.execute("UPDATE reservation SET last_reconciled_at = '2100-01-01 00:00:00' WHERE tenant = 'sd'");
    await L.db.execute("UPDATE outbox SET dead_at = UTC_TIMESTAMP(3), attempts = 8, last_error = 'boom' WHERE tenant = 'sd' AND reservation_id = ?", [dead]);
    const r = await sweep(L.deps(), { cron: '*/5 * * * *', staleAfterMs: 3_600_000, pageSize: 100, maxStatements: 40, holder: 'h', scheduledTime: 20_000 });
    expect(r).toMatchObject({ claimed: true, complete: true });
    const pending = await L.db.execute(
      "SELECT reservation_id FROM outbox WHERE kind = 'reconcile' AND done_at IS NULL AND dead_at IS NULL AND reservation_id IN (?, ?)",
      [dead, live],
    );
    expect(pending.rows.map((row) => row.reservation_id)).toEqual([dead]);
  });

  it('GET shows the error a pending outbox row is retried for and when it is tried next', async () => {
    await L.setQuota('na', 'cpu=10', 'memory=10Gi');
    const { id } = (await admit(L.deps(), input('na', { name: 'retrying' }))).admission;
    expect((await getAdmission(L.deps(), 'na', id)).lastError).toBeNull();
    await L.db.execute(
      "UPDATE outbox SET attempts = 3, last_error = 'POST modelservices: 500 InternalError', available_at = '2100-01-01 00:00:05.250' WHERE tenant = 'na' AND reservation_id = ?",
      [id],
    );
    expect(await getAdmission(L.deps(), 'na', id)).toMatchObject({
      state: 'admitted',
      lastError: 'POST modelservices: 500 InternalError',
      nextAttemptAt: '2100-01-01T00:00:05.250Z',
      deadOutboxRows: 0,
    });
    // Delivered (ackCreate: row done + state in one transaction): nothing pending any more.
    await L.db.execute("UPDATE outbox SET done_at = UTC_TIMESTAMP(3) WHERE tenant = 'na' AND reservation_id = ?", [id]);
    await L.db.execute("UPDATE reservation SET state = 'delivered' WHERE tenant = 'na' AND id = ?", [id]);
    expect(await getAdmission(L.deps(), 'na', id)).toMatchObject({ lastError: null, nextAttemptAt: null });
  });

  it('deletes acknowledged outbox rows past the retention once the scan completed; keeps recent, pending and dead rows', async () => {
    const before = await L.count('SELECT COUNT(*) FROM outbox');
    await L.db.execute(
      `INSERT INTO outbox (tenant, reservation_id, kind, available_at, created_at, done_at, dead_at) VALUES
         ('old', '01OLDDONE0000000000000000A', 'reconcile', '2020-01-01', '2020-01-01', '2020-01-02', NULL),
         ('old', '01OLDDONE0000000000000000B', 'create', '2020-01-01', '2020-01-01', '2020-01-02', NULL),
         ('old', '01OLDDEAD0000000000000000C', 'create', '2020-01-01', '2020-01-01', NULL, '2020-01-02'),
         ('old', '01OLDPEND0000000000000000D', 'delete', '2020-01-01', '2020-01-01', NULL, NULL)`,
    );
    const opts = { cron: '*/5 * * * *', staleAfterMs: 3_600_000, pageSize: 100, maxStatements: 40, holder: 'h', retentionMs: 7 * 86_400_000 };
    const r = await sweep(L.deps(), { ...opts, scheduledTime: 9_000 });
    expect(r).toMatchObject({ claimed: true, complete: true, purged: 2 });
    expect(await L.count(`SELECT COUNT(*) FROM outbox WHERE reservation_id LIKE '01OLD%'`)).toBe(2);
    expect(await L.count('SELECT COUNT(*) FROM outbox')).toBe(before + 2);
  });
});

describe('npm run tenant: the count quota', () => {
  it('a tenant set up without a modelservices limit gets the default; an explicit one is kept; backfill-count fills the rest once', async () => {
    await L.setQuota('cnt-a', 'cpu=1');
    expect((await readQuota(L.db, 'cnt-a')).quota.modelservices).toEqual({ hard: 20, used: 0 });
    await L.setQuota('cnt-a', 'modelservices=5');
    await L.setQuota('cnt-a', 'cpu=2');
    expect((await readQuota(L.db, 'cnt-a')).quota.modelservices).toEqual({ hard: 5, used: 0 });
    // A tenant from before migration 0003: a quota row, no count limit.
    await setHard(L.db, 'cnt-old', 'cpu', 1000, new Date());
    expect(await backfillCount(L.db)).toEqual(['cnt-old']);
    expect((await readQuota(L.db, 'cnt-old')).quota.modelservices).toEqual({ hard: 20, used: 0 });
    expect(await backfillCount(L.db)).toEqual([]);
  });
});
