// The deposed leader, statement by statement, against real MariaDB through the production driver:
// every fenced write of the controller's ledger and outbox modules is called with a stale epoch
// and must change no row of any ledger table; called again with the current epoch, the same
// call must change something (so a case whose fixture makes the write a no-op anyway cannot pass).
// The same table runs once more with another cluster's leader (docs/multi-cluster.md, "Fencing"):
// its epoch is newer, yet it changes nothing of a row on this cluster, and its takeover fences
// nothing of this cluster's leader.
//
// FENCED is the table: statement name → how to arrange rows it would change, and the call. A
// name is `<module>.<function>` (optionally followed by a variant); the completeness test reads
// controller/reservation/ (test/support/fenced-writes.ts) and fails on a write without a case here,
// and on a write that is not fenced at all. When the fence is redesigned (per shard), extend the
// table, not the runner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue } from '../../ledger/outbox.ts';
import { ack, ClaimLost, fail, type ClaimedRow } from '../../controller/reservation/outbox-store.ts';
import { acquireEpoch } from '../../controller/reservation/leader-epoch.ts';
import { ackCreate, ackCreates, markReady, recordProgress, recordScaleApplied, setReleaseBlocked, touchReconciled, transition } from '../../controller/reservation/transitions.ts';
import { refundScaleDown, release } from '../../controller/reservation/quota-moves.ts';
import { freeStranded, placementsLeft, stepLeftover } from '../../controller/reservation/leftover.ts';
import { loadReservationRecord } from '../../controller/reservation/record.ts';
import type { ReconcileScope } from '../../controller/reservation/reconcile-deps.ts';
import { silentLogger } from '../../controller/runtime/log.ts';
import { createPlacer } from '../../ledger/placement.ts';
import { crNameFor, type ReservationState } from '../../schema/admission.ts';
import type { Db } from '../../ledger/db.ts';
import { shardDb } from '../../ledger/shards.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { ledgerWriteFunctions } from '../support/fenced-writes.ts';
import { claimEverywhere, insertAdmission } from '../support/ledger-rows.ts';

let ledger: LedgerDatabase;
let db: Db;
beforeAll(async () => {
  ledger = await createLedgerDatabase();
  db = ledger.db;
  await ledger.setQuota('acme', 'cpu=1000', 'memory=1000000Mi', 'nvidia.com/gpu=100', 'modelservices=1000');
});
afterAll(async () => ledger?.drop());

/** Writes that are deliberately not fenced, with the reason. */
const UNFENCED: Record<string, string> = {
  'leader-epoch.acquireEpoch': 'it is the fence: becoming leader bumps the epoch and raises every tenant fence',
  'leader-epoch.ensureFence': 'it is the fence: it raises a tenant fence (never lowers it), so a deposed leader raises nothing above the current epoch',
  'quota-moves.insertMovements': "a step inside a transaction, never a write on its own: it runs only after the transaction's first statement matched (the fenced UPDATE of release and refundScaleDown, the conflict guard of the operator's resolveConflict)",
  'quota-moves.giveBackUsage': "a step inside a transaction, never a write on its own: it runs only after the transaction's first statement matched (the fenced UPDATE of release and refundScaleDown, the conflict guard of the operator's resolveConflict, scripts/operator/)",
};

/** The fenced writes the scanner finds; a change means a write was added or removed (extend FENCED with it). */
const FENCED_WRITES = 15;

interface FencedCase<Ctx> {
  /** Rows the write would change; runs while `epoch` (the soon-deposed leader's) is current. */
  arrange(epoch: number): Promise<Ctx>;
  /** The write, made with `epoch`. ClaimLost counts as a refusal. */
  act(ctx: Ctx, epoch: number): Promise<unknown>;
}
const fencedCase = <Ctx>(c: FencedCase<Ctx>): FencedCase<unknown> => c as FencedCase<unknown>;

const later = () => new Date(Date.now() + 1000);
const bound = (state: ReservationState) => insertAdmission(db, { state, binding: { namespace: 'ns', uid: 'u1' } });
/** An admission a failover moved from this cluster (`default`) to another, its placement here left stranded. */
async function movedAway(): Promise<string> {
  const id = await bound('ready');
  await db.execute("UPDATE reservation SET cluster = 'elsewhere', placement_seq = 2 WHERE tenant = ? AND id = ?", ['acme', id]);
  await db.execute(
    `INSERT INTO placement (tenant, reservation_id, seq, cluster, anchor, state, reason, held_cpu_millis, held_memory_mib, held_gpu, held_modelservices, ended_at)
     VALUES (?, ?, 1, 'default', ?, 'stranded', 'failover: default lost (epoch 1)', 100, 128, 0, 1, ?)`,
    ['acme', id, await createPlacer().anchorOf(db, 'acme'), new Date()], // the anchor on the tenant's shard
  );
  return id;
}
/** What stepLeftover needs of a reconcile: this cluster's fence and clock, the ledger, and a cluster where nothing of the admission is left. */
const leftoverScope = () =>
  ({
    db,
    fence: { cluster: 'default' },
    namespaceFor: () => 'ns',
    cluster: { readModelService: async () => null, listPods: async () => [] },
    metrics: { strandedFreed: { inc: () => undefined }, leftoversDeleted: { inc: () => undefined } },
    now: later,
  }) as unknown as ReconcileScope;

/** A bound reservation at change generation 2, applied up to `applied` (a decrease when 2: its refund is due). */
async function changed(applied: 1 | 2): Promise<string> {
  const id = await bound('ready');
  await db.execute('UPDATE reservation SET generation = 2, applied_generation = ? WHERE tenant = ? AND id = ?', [applied, 'acme', id]);
  return id;
}
const stateTransition = (from: ReservationState, to: ReservationState) =>
  fencedCase({
    arrange: () => bound(from),
    act: (id, epoch) => transition(db, { tenant: 'acme', id }, [from], to, epoch, later(), `late ${from} → ${to}`),
  });

/** One due outbox row of its own reservation, claimed by the leader of `epoch`. */
async function claimedRow(epoch: number, kind: 'create' | 'delete' | 'reconcile' = 'create', state: ReservationState = 'admitted'): Promise<ClaimedRow> {
  const [row] = await claimedRows(epoch, 1, kind, state);
  return row!;
}
/** `n` due outbox rows, each of its own reservation, claimed together (one claim) by the leader of `epoch`. */
async function claimedRows(epoch: number, n: number, kind: 'create' | 'delete' | 'reconcile' = 'create', state: ReservationState = 'admitted'): Promise<ClaimedRow[]> {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(await insertAdmission(db, { state }));
  await enqueue(db, ids.map((id) => ({ tenant: 'acme', reservationId: id, kind, dedupeKey: `${kind}:${id}`, requestId: 'r', cluster: 'default' })), new Date());
  const claimed = await claimEverywhere(db, { cluster: 'default', holder: 'old', epoch, leaseMs: 600_000, limit: 1000, now: new Date() });
  return ids.map((id) => {
    const row = claimed.find((r) => r.reservationId === id);
    if (!row) throw new Error(`outbox row of ${id} not claimed`);
    return row;
  });
}
/** The same claim, presented with `epoch` (what the leader of that epoch would send). */
const withEpoch = (row: ClaimedRow, epoch: number): ClaimedRow => ({ ...row, claim: { ...row.claim, epoch } });

const FENCED: Record<string, FencedCase<unknown>> = {
  // the reservation state machine (docs/design.md), every transition the controller makes
  'transitions.ackCreate admitted → delivered': fencedCase({
    arrange: (epoch) => claimedRow(epoch, 'create', 'admitted'),
    act: (row, epoch) => ackCreate(db, withEpoch(row, epoch), { namespace: 'ns', name: crNameFor(row.reservationId), uid: 'u1' }, later()),
  }),
  'transitions.ackCreates admitted → delivered, a claim\'s deliveries together': fencedCase({
    arrange: (epoch) => claimedRows(epoch, 2),
    act: (rows, epoch) =>
      ackCreates(shardDb(db, rows[0]?.claim.shard ?? ''), rows.map((row) => ({ row: withEpoch(row, epoch), cr: { namespace: 'ns', name: crNameFor(row.reservationId), uid: 'u1' } })), later()),
  }),
  'transitions.markReady delivered → ready': fencedCase({ arrange: () => bound('delivered'), act: (id, epoch) => markReady(db, { tenant: 'acme', id }, epoch, later()) }),
  'transitions.transition delivered → releasing': stateTransition('delivered', 'releasing'),
  'transitions.transition ready → releasing': stateTransition('ready', 'releasing'),
  'transitions.transition deleting → releasing': stateTransition('deleting', 'releasing'),
  'transitions.transition admitted → conflict': stateTransition('admitted', 'conflict'),
  'transitions.transition delivered → conflict': stateTransition('delivered', 'conflict'),
  'transitions.transition ready → conflict': stateTransition('ready', 'conflict'),
  'transitions.transition deleting → conflict': stateTransition('deleting', 'conflict'),
  'transitions.transition releasing → conflict': stateTransition('releasing', 'conflict'),
  'quota-moves.release releasing → released': fencedCase({ arrange: () => bound('releasing'), act: (id, epoch) => release(db, { tenant: 'acme', id }, epoch, later()) }),
  // the other reservation columns the controller writes
  'transitions.setReleaseBlocked': fencedCase({
    arrange: () => bound('releasing'),
    act: (id, epoch) => setReleaseBlocked(db, { tenant: 'acme', id }, new Date(), { reason: 'PodsStillPresent', pods: ['pod-a'], finalizers: [] }, epoch, later()),
  }),
  'transitions.recordProgress': fencedCase({
    arrange: () => bound('delivered'),
    act: (id, epoch) =>
      recordProgress(db, { tenant: 'acme', id }, { scheduledAt: new Date(), startedAt: new Date(), lastFailure: { reason: 'OOMKilled', message: 'late', exitCode: 137 } }, epoch, later()),
  }),
  'transitions.recordScaleApplied': fencedCase({ arrange: () => changed(1), act: (id, epoch) => recordScaleApplied(db, { tenant: 'acme', id }, 2, true, epoch, later()) }),
  'quota-moves.refundScaleDown': fencedCase({
    arrange: () => changed(2),
    act: (id, epoch) => refundScaleDown(db, { tenant: 'acme', id }, 2, { cpu: 100, memory: 128, 'nvidia.com/gpu': 0, modelservices: 0 }, epoch, later(), null),
  }),
  'transitions.touchReconciled': fencedCase({ arrange: () => bound('ready'), act: (id, epoch) => touchReconciled(db, { tenant: 'acme', id }, epoch, later()) }),
  // failover (docs/multi-cluster.md T9): the stranded room of an admission moved away, freed by this cluster
  'leftover.freeStranded': fencedCase({
    arrange: () => movedAway(),
    act: async (id, epoch) => {
      const [left] = await placementsLeft(db, { tenant: 'acme', id }, 'default');
      return freeStranded(db, { tenant: 'acme', id }, 'default', left!, epoch, later());
    },
  }),
  'leftover.stepLeftover nothing left here: free': fencedCase({
    arrange: () => movedAway(),
    act: async (id, epoch) => stepLeftover(leftoverScope(), (await loadReservationRecord(db, { tenant: 'acme', id }))!, epoch, silentLogger),
  }),
  // the outbox
  'outbox-store.claimDue': fencedCase({
    arrange: async () => {
      const id = await insertAdmission(db);
      await enqueue(db, [{ tenant: 'acme', reservationId: id, kind: 'reconcile', dedupeKey: `reconcile:${id}`, requestId: 'r', cluster: 'default' }], new Date());
    },
    act: (_, epoch) => claimEverywhere(db, { cluster: 'default', holder: 'late', epoch, leaseMs: 60_000, limit: 1000, now: later() }),
  }),
  'outbox-store.ack create': fencedCase({ arrange: (epoch) => claimedRow(epoch, 'create'), act: (row, epoch) => ack(db, withEpoch(row, epoch), later()) }),
  'outbox-store.ack reconcile': fencedCase({ arrange: (epoch) => claimedRow(epoch, 'reconcile'), act: (row, epoch) => ack(db, withEpoch(row, epoch), later()) }),
  'outbox-store.fail retry': fencedCase({
    arrange: (epoch) => claimedRow(epoch, 'delete'),
    act: (row, epoch) => fail(db, withEpoch(row, epoch), 'late', { now: later(), retryAt: new Date(Date.now() + 86_400_000) }),
  }),
  'outbox-store.fail dead': fencedCase({
    arrange: (epoch) => claimedRow(epoch, 'reconcile'),
    act: (row, epoch) => fail(db, withEpoch(row, epoch), 'late', { now: later(), retryAt: new Date(Date.now() + 86_400_000), terminal: true }),
  }),
};

const refusedOrDone = (p: Promise<unknown>) =>
  p.catch((err: unknown) => {
    if (!(err instanceof ClaimLost)) throw err;
  });

describe('fencing: a deposed leader changes no row, statement by statement', () => {
  it('every write of the reservation controller modules is fenced and has a case in FENCED', () => {
    const writes = ledgerWriteFunctions();
    expect(writes.map((w) => w.name)).toContain('transitions.markReady'); // the scanner sees the modules
    expect(writes.filter((w) => w.fenced), 'the scanner no longer finds every fenced write').toHaveLength(FENCED_WRITES);
    const listed = Object.keys(UNFENCED).filter((name) => !writes.some((w) => !w.fenced && w.name === name));
    expect(listed, 'an UNFENCED entry for a function that is no unfenced write').toEqual([]);
    const unfenced = writes.filter((w) => !w.fenced && !(w.name in UNFENCED)).map((w) => w.name);
    expect(unfenced, 'a ledger write without FENCE (or list it in UNFENCED with the reason)').toEqual([]);
    const cases = Object.keys(FENCED);
    const missing = writes.filter((w) => w.fenced && !cases.some((c) => c === w.name || c.startsWith(`${w.name} `))).map((w) => w.name);
    expect(missing, 'a fenced write without a stale-epoch case in FENCED').toEqual([]);
    const stale = cases.filter((c) => !writes.some((w) => w.fenced && (c === w.name || c.startsWith(`${w.name} `))));
    expect(stale, 'a case in FENCED for a function that is no fenced write').toEqual([]);
  });

  it.each(Object.entries(FENCED))('%s', async (_name, c) => {
    const old = await acquireEpoch(db, 'default', 'old', new Date());
    const ctx = await c.arrange(old);
    const current = await acquireEpoch(db, 'default', 'new', new Date());

    const before = await ledger.fingerprint();
    await refusedOrDone(c.act(ctx, old));
    expect(await ledger.fingerprint(), 'the stale epoch changed a row').toBe(before);

    // The control: the same write by the current leader does change the ledger.
    await refusedOrDone(c.act(ctx, current));
    expect(await ledger.fingerprint(), 'the case does not exercise the write (nothing changes even with the current epoch)').not.toBe(before);
  });
});

describe("fencing per cluster: another cluster's leader changes no row of this cluster, and does not fence its leader", () => {
  it.each(Object.entries(FENCED))('%s', async (_name, c) => {
    const mine = await acquireEpoch(db, 'default', 'ctl-default', new Date());
    const ctx = await c.arrange(mine);
    // A newer epoch (the one global counter), raised on every tenant of the other cluster.
    const other = await acquireEpoch(db, 'c-other', 'ctl-other', new Date());
    expect(other).toBeGreaterThan(mine);

    const before = await ledger.fingerprint();
    await refusedOrDone(c.act(ctx, other));
    expect(await ledger.fingerprint(), "another cluster's leader changed a row of this cluster").toBe(before);

    // The control: this cluster's leader, whose epoch is older, is still current on its own rows.
    await refusedOrDone(c.act(ctx, mine));
    expect(await ledger.fingerprint(), "the other cluster's takeover fenced this cluster's leader out").not.toBe(before);
  });
});
