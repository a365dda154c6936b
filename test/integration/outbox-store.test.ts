// The outbox lease against the real ledger (MariaDB, or the 2-shard Vitess keyspace): rows are claimed once, acknowledged only while the
// claim holds and the epoch is current, retried with backoff for as long as it takes, and dead only on a terminal failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../ledger/db.ts';
import { enqueue } from '../../ledger/outbox.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { ack, ClaimLost, fail, holdsClaim, retryDelayMs, type ClaimedRow, type ClaimOptions } from '../../controller/reservation/outbox-store.ts';
import { ackCreate, ackCreates } from '../../controller/reservation/transitions.ts';
import { shardDb } from '../../ledger/shards.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { claimEverywhere, insertAdmission } from '../support/ledger-rows.ts';

let ledger: LedgerDatabase;
let db: Db;
beforeAll(async () => {
  ledger = await createLedgerDatabase();
  db = ledger.db;
  await ledger.setQuota('acme', 'cpu=1'); // a tenant with a quota: the takeover raises its fence
});
/** The poller's claim: every shard (one on MariaDB). */
const claimDue = (q: Db, o: ClaimOptions) => claimEverywhere(q, o);
afterAll(async () => ledger?.drop());

let n = 0;
async function rows(count: number, kind: 'create' | 'delete' | 'reconcile' = 'create'): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `01OUTBOX${String(++n).padStart(18, '0')}`);
  await enqueue(db, ids.map((id) => ({ tenant: 'acme', reservationId: id, kind, dedupeKey: `${kind}:${id}`, requestId: 'r', cluster: 'default' })), new Date());
  return ids;
}
const pending = async () => Number((await db.execute('SELECT COUNT(*) AS c FROM outbox WHERE done_at IS NULL AND dead_at IS NULL')).rows[0]?.c);
/** Acknowledges every row left by earlier tests (claims included: it acts a day later). */
const drain = async (epoch: number) => {
  const later = new Date(Date.now() + 86_400_000);
  for (;;) {
    const got = await claimDue(db, { cluster: 'default', holder: 'drain', epoch, leaseMs: 60_000, limit: 100, now: later });
    if (got.length === 0) return;
    for (const r of got) expect(await ack(db, r, later)).toBe(true);
  }
};

describe('outbox claim / ack', () => {
  it('two claimers racing for the same rows never both get one', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    await drain(epoch);
    await rows(20);
    const now = new Date();
    const [a, b, c] = await Promise.all(
      ['a', 'b', 'c'].map((holder) => claimDue(db, { cluster: 'default', holder, epoch, leaseMs: 30_000, limit: 20, now })),
    );
    const seqs = [...a!, ...b!, ...c!].map((r) => r.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.length).toBeLessThanOrEqual(20);
    // whatever a racer lost is claimable later; in total every row is claimed exactly once
    const rest = await claimDue(db, { cluster: 'default', holder: 'd', epoch, leaseMs: 30_000, limit: 100, now });
    expect(seqs.length + rest.length).toBe(20);
  });

  it('an expired lease can be re-claimed; the old claimer can no longer acknowledge', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    await drain(epoch);
    await rows(1);
    const t0 = new Date();
    const [first] = await claimDue(db, { cluster: 'default', holder: 'slow', epoch, leaseMs: 1000, limit: 1, now: t0 });
    expect(first).toBeDefined();
    const later = new Date(t0.getTime() + 1500);
    expect(await holdsClaim(db, first!, later)).toBe(false); // ran out: the re-check before a CR create fails
    const [second] = await claimDue(db, { cluster: 'default', holder: 'fast', epoch, leaseMs: 30_000, limit: 1, now: later });
    expect(second?.seq).toBe(first!.seq);
    expect(second?.attempts).toBe(0); // a lease that ran out is not a failed attempt
    expect(await ack(db, first!, later)).toBe(false);
    expect(await ack(db, second!, later)).toBe(true);
    expect(await pending()).toBe(0);
  });

  it("each cluster's leader claims only the rows routed to its cluster, and neither takeover fences the other", async () => {
    const c1 = await acquireEpoch(db, 'default', 'ctl-1', new Date());
    await drain(c1);
    const c2 = await acquireEpoch(db, 'c-two', 'ctl-2', new Date());
    const [mine] = await rows(1);
    const theirs = `01OUTBOX${String(++n).padStart(18, '0')}`;
    await enqueue(db, [{ tenant: 'acme', reservationId: theirs, kind: 'create', dedupeKey: `create:${theirs}`, requestId: 'r', cluster: 'c-two' }], new Date());
    const now = new Date();
    const got1 = await claimDue(db, { cluster: 'default', holder: 'ctl-1', epoch: c1, leaseMs: 60_000, limit: 100, now });
    const got2 = await claimDue(db, { cluster: 'c-two', holder: 'ctl-2', epoch: c2, leaseMs: 60_000, limit: 100, now });
    expect(got1.map((r) => r.reservationId)).toEqual([mine]);
    expect(got2.map((r) => r.reservationId)).toEqual([theirs]);
    // Both leaders are current on their own rows (c2's newer epoch did not fence c1's), and
    // neither can acknowledge the other's row even with the other's claim in hand.
    expect(await ack(db, { ...got1[0]!, claim: { ...got1[0]!.claim, epoch: c2 } }, now)).toBe(false);
    expect(await ack(db, { ...got2[0]!, claim: { ...got2[0]!.claim, epoch: c1 } }, now)).toBe(false);
    expect(await ack(db, got1[0]!, now)).toBe(true);
    expect(await ack(db, got2[0]!, now)).toBe(true);
    expect(await pending()).toBe(0);
  });

  it('a deposed leader (stale epoch) can neither claim nor acknowledge', async () => {
    const old = await acquireEpoch(db, 'default', 'old', new Date());
    await drain(old);
    const [id] = await rows(1);
    const [claimed] = await claimDue(db, { cluster: 'default', holder: 'old', epoch: old, leaseMs: 60_000, limit: 1, now: new Date() });
    expect(await holdsClaim(db, claimed!, new Date())).toBe(true);
    await acquireEpoch(db, 'default', 'new', new Date());
    expect(await holdsClaim(db, claimed!, new Date())).toBe(false); // the re-check before a CR create
    expect(await ack(db, claimed!, new Date())).toBe(false);
    await expect(ackCreate(db, claimed!, { namespace: 'ns', name: `md-${id}`, uid: 'u' }, new Date())).rejects.toThrow(ClaimLost);
    expect(Number((await db.execute('SELECT COUNT(*) AS c FROM binding WHERE tenant = ? AND reservation_id = ?', ['acme', id!])).rows[0]?.c)).toBe(0);
    const more = await claimDue(db, { cluster: 'default', holder: 'old', epoch: old, leaseMs: 60_000, limit: 10, now: new Date(Date.now() + 120_000) });
    expect(more).toEqual([]);
  });

  it('a new leader takes over the rows claimed under an older epoch at once, without waiting for the lease', async () => {
    const old = await acquireEpoch(db, 'default', 'old', new Date());
    await drain(old);
    await rows(2);
    const taken = await claimDue(db, { cluster: 'default', holder: 'old', epoch: old, leaseMs: 600_000, limit: 10, now: new Date() });
    expect(taken).toHaveLength(2);
    const next = await acquireEpoch(db, 'default', 'new', new Date());
    const retaken = await claimDue(db, { cluster: 'default', holder: 'new', epoch: next, leaseMs: 60_000, limit: 10, now: new Date() });
    expect(retaken.map((r) => r.seq)).toEqual(taken.map((r) => r.seq));
    for (const r of retaken) expect(await ack(db, r, new Date())).toBe(true);
    for (const r of taken) expect(await ack(db, r, new Date())).toBe(false);
  });

  it('fail() backs off and retries a transient failure for as long as it takes (never dead), and marks a terminal one dead', async () => {
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    await drain(epoch);
    await rows(1, 'reconcile');
    let now = new Date();
    const TRANSIENT = 20; // many failures: a transient error never makes a row dead
    for (let attempt = 1; attempt <= TRANSIENT + 1; attempt++) {
      const [r] = await claimDue(db, { cluster: 'default', holder: 'w', epoch, leaseMs: 60_000, limit: 1, now });
      expect(r?.attempts).toBe(attempt - 1); // failures so far
      const retryAt = new Date(now.getTime() + 5000);
      const terminal = attempt > TRANSIENT;
      const outcome = await fail(db, r!, `boom ${attempt}`, { now, retryAt, terminal });
      expect(outcome).toBe(terminal ? 'dead' : 'retry');
      expect(await claimDue(db, { cluster: 'default', holder: 'w', epoch, leaseMs: 60_000, limit: 1, now })).toEqual([]); // not due yet
      if (!terminal) {
        const live = await db.execute('SELECT dead_at, last_error, available_at FROM outbox WHERE tenant = ? AND seq = ?', ['acme', r!.seq]);
        expect(live.rows[0]).toMatchObject({ dead_at: null, last_error: `boom ${attempt}` });
      }
      now = new Date(retryAt.getTime() + 1);
    }
    const dead = await db.execute("SELECT dead_at, last_error, dedupe_key FROM outbox WHERE tenant = 'acme' AND dead_at IS NOT NULL ORDER BY seq DESC LIMIT 1");
    expect(dead.rows[0]).toMatchObject({ last_error: `boom ${TRANSIENT + 1}`, dedupe_key: null });
    expect(await claimDue(db, { cluster: 'default', holder: 'w', epoch, leaseMs: 60_000, limit: 10, now: new Date(Date.now() + 3_600_000) })).toEqual([]);
  });
});

describe('ackCreates: the deliveries of one claim acknowledged in one transaction', () => {
  const delivered = async (ids: string[]) => ({
    bindings: await ledger.count(`SELECT COUNT(*) FROM binding WHERE tenant = 'acme' AND reservation_id IN (?)`, [ids]),
    states: (await db.execute(`SELECT state FROM reservation WHERE tenant = 'acme' AND id IN (?) ORDER BY id`, [ids])).rows.map((r) => String(r.state)),
    open: await ledger.count(`SELECT COUNT(*) FROM outbox WHERE tenant = 'acme' AND reservation_id IN (?) AND done_at IS NULL`, [ids]),
  });
  const acks = (claimed: ClaimedRow[]) => claimed.map((row) => ({ row, cr: { namespace: 'ns', name: `md-${row.reservationId.toLowerCase()}`, uid: `u-${row.reservationId}` } }));

  it('all or nothing: one claim lost among them writes nothing; the rest then go together', async () => {
    await ledger.setQuota('acme', 'cpu=1000', 'memory=1000000Mi', 'nvidia.com/gpu=100');
    const epoch = await acquireEpoch(db, 'default', 'ctl', new Date());
    await drain(epoch);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await insertAdmission(db));
    await enqueue(db, ids.map((id) => ({ tenant: 'acme', reservationId: id, kind: 'create' as const, dedupeKey: `create:${id}`, requestId: 'r', cluster: 'default' })), new Date());
    const claimed = await claimDue(db, { cluster: 'default', holder: 'ctl', epoch, leaseMs: 60_000, limit: 100, now: new Date() });
    expect(claimed).toHaveLength(3);
    expect(new Set(claimed.map((r) => r.claim.by)).size).toBe(1); // one tenant, one shard: one claim
    const shard = shardDb(db, claimed[0]!.claim.shard ?? '');

    expect(await ack(db, claimed[0]!, new Date())).toBe(true); // its claim is gone: acknowledged elsewhere
    expect(await ackCreates(shard, acks(claimed), new Date())).toBe(false);
    expect(await delivered(ids.slice(1))).toEqual({ bindings: 0, states: ['admitted', 'admitted'], open: 2 });

    expect(await ackCreates(shard, acks(claimed.slice(1)), new Date())).toBe(true);
    expect(await delivered(ids.slice(1))).toEqual({ bindings: 2, states: ['delivered', 'delivered'], open: 0 });
    const uids = await db.execute(`SELECT reservation_id, uid FROM binding WHERE tenant = 'acme' AND reservation_id IN (?)`, [ids.slice(1)]);
    expect(Object.fromEntries(uids.rows.map((r) => [String(r.reservation_id), String(r.uid)]))).toEqual(Object.fromEntries(ids.slice(1).map((id) => [id, `u-${id}`])));
    await expect(ackCreates(shard, acks(claimed.slice(1)), new Date())).resolves.toBe(false); // twice: nothing more
  });
});

describe('retryDelayMs', () => {
  it('grows exponentially with jitter inside [cap/2, cap] and is capped', () => {
    const b = { baseMs: 1000, capMs: 300_000 };
    expect(retryDelayMs(1, b, () => 0)).toBe(500);
    expect(retryDelayMs(1, b, () => 1)).toBe(1000);
    expect(retryDelayMs(4, b, () => 1)).toBe(8000);
    expect(retryDelayMs(30, b, () => 1)).toBe(300_000);
    expect(retryDelayMs(10_000, b, () => 1)).toBe(300_000); // no overflow, however long the outage
    expect(retryDelayMs(30, { baseMs: 100, capMs: 2000 }, () => 1)).toBe(2000);
  });
});
