import { describe, expect, it } from 'vitest';
import { LABELS } from '../../schema/model-service.ts';
import { parseRegistryList } from '../../schema/policy.ts';
import { splitKey, type Request } from '../runtime/controller.ts';
import { silentLogger } from '../runtime/log.ts';
import { ledgerRecord, reconcileHarness, type Harness, type HarnessOptions } from '../../test/support/reconcile-harness.ts';
import { ago, CHARGED, claimedRow, CR_NAME, EPOCH, KEY, modelService, NAMESPACE, NOW, reservationRow, SPEC } from '../../test/support/reservation-fixtures.ts';
import { ForeignNamespace } from '../tenant/space.ts';
import { reservationKey } from './key.ts';
import { ClaimLost } from './outbox-store.ts';
import { reservationReconciler } from './reconcile.ts';

const REQUEST: Request = splitKey(reservationKey(KEY));

async function reconcile(o: HarnessOptions, req: Request = REQUEST): Promise<{ h: Harness; result: unknown }> {
  const h = reconcileHarness(o);
  const result = await reservationReconciler(h.deps)(req, { log: silentLogger, fresh: false, signal: new AbortController().signal });
  return { h, result };
}

/** The same, for a reconcile that throws: the harness and the error. */
async function failing(o: HarnessOptions): Promise<{ h: Harness; err: unknown }> {
  const h = reconcileHarness(o);
  const err = await reservationReconciler(h.deps)(REQUEST, { log: silentLogger, fresh: false, signal: new AbortController().signal }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) throw new Error('the reconcile did not fail');
  return { h, err };
}

const kinds = (h: Harness) => h.writes().map((w) => writeKind(w.sql, w.args));
const logged = (h: Harness) => h.logs.map((l) => l.msg);

/** A write named by what it does (the SQL of transitions.ts, quota-moves.ts and outbox-store.ts). */
function writeKind(sql: string, args: readonly unknown[]): string {
  if (sql.startsWith('UPDATE outbox o') && sql.includes('o.done_at = ?')) return 'outbox done';
  if (sql.startsWith('UPDATE outbox o') && sql.includes('o.attempts = o.attempts + 1')) return args[3] === null ? 'outbox retry' : 'outbox dead';
  if (sql.startsWith('INSERT INTO binding')) return 'binding';
  if (sql.startsWith("UPDATE reservation SET state = 'delivered'")) return '→ delivered';
  if (sql.includes('SET r.state = ?,')) return `→ ${String(args[1])}`;
  if (sql.includes('SET r.last_reconciled_at = ?')) return 'looked at';
  return sql.slice(0, 60);
}

describe('ledger reconciler: the key', () => {
  it('a key without a tenant is dropped: nothing read, nothing written', async () => {
    const { h, result } = await reconcile({ records: [reservationRow({ state: 'delivered' })] }, splitKey('01HRESERVATION'));
    expect(result).toEqual({});
    expect(h.statements).toEqual([]);
    expect(logged(h)).toEqual(['ledger key without a tenant: dropped']);
  });

  it("claims of another tenant's reservation of that id go back to the poller; its own are acknowledged", async () => {
    const mine = claimedRow(1, 'reconcile');
    const theirs = claimedRow(2, 'reconcile', { tenant: 'other' });
    const { h } = await reconcile({ records: [reservationRow({ state: 'ready', binding: { everReady: true }, lastReconciledAt: ago(1_000) })], cached: modelService({ ready: true }), claims: [mine, theirs] });
    expect(h.kept).toEqual([theirs]);
    expect(kinds(h)).toEqual(['outbox done']);
    expect(h.writes()[0]?.args.slice(2, 4)).toEqual([KEY.tenant, 1]); // the row, by (tenant, seq)
  });
});

describe('ledger reconciler: delivery', () => {
  it('a claimed create: the CR under its deterministic name, then binding + delivered + row done in one transaction; nothing more until its first news or the never-Ready deadline', async () => {
    const { h, result } = await reconcile({ records: [reservationRow({ state: 'admitted', binding: null })], claims: [claimedRow(1, 'create')] });
    expect(result).toEqual({ requeueAfterMs: 600_000 }); // the harness's readyDeadlineMs
    const create = h.calls.find((c) => c.op === 'createModelService')?.args[0] as ReturnType<typeof modelService>;
    expect(create.metadata).toMatchObject({ name: CR_NAME, labels: { [LABELS.admissionId]: KEY.id, [LABELS.tenant]: KEY.tenant } });
    expect(create.spec).toEqual(SPEC);
    expect(kinds(h)).toEqual(['outbox done', 'binding', '→ delivered']);
    expect(new Set(h.writes().map((w) => w.tx)).size).toBe(1);
    expect(h.ends).toEqual(['commit']);
    expect(h.writes()[1]?.args).toEqual([KEY.tenant, KEY.id, 'default', 'tenants', CR_NAME, 'uid-new', NOW, NOW]);
    expect(await h.count('delivered', { outcome: 'created' })).toBe(1);
    expect(h.created.map((o) => o.metadata.uid)).toEqual(['uid-new']); // its informer add event is no news
    expect(h.calls.map((c) => c.op)).toEqual(['ensureTenantSpace', 'createModelService']);
    expect(h.logs.filter((l) => l.level !== 'debug').map(({ time: _time, ...l }) => l)).toEqual([
      { level: 'info', msg: 'ModelService created', admissionId: KEY.id, key: `${KEY.tenant}/${KEY.id}`, reqId: 'req-1', name: CR_NAME, uid: 'uid-new' },
    ]);
  });

  it('a claimed create starts from the record read with its claim: the one read before the CR create is the re-check of its claim under the fence', async () => {
    const { h } = await reconcile({ records: [], prefetched: await ledgerRecord({ state: 'admitted', binding: null }), claims: [claimedRow(1, 'create')] });
    expect(h.calls.map((c) => c.op)).toEqual(['ensureTenantSpace', 'createModelService']);
    const reads = h.statements.filter((s) => s.sql.trim().startsWith('SELECT'));
    expect(reads.map((s) => s.sql.replace(/\s+/g, ' ').trim())).toEqual([
      'SELECT 1 AS held FROM outbox o JOIN tenant_fence f ON f.tenant = o.tenant AND f.cluster = o.cluster AND f.epoch = ? WHERE o.tenant = ? AND o.seq = ? AND o.claimed_by = ? AND o.claimed_until >= ? AND o.done_at IS NULL',
    ]);
    const row = claimedRow(1, 'create');
    expect(reads[0]?.args).toEqual([row.claim.epoch, KEY.tenant, 1, row.claim.by, NOW]);
  });

  it('a deposed leader (or a claim run out) creates no CR: the re-check finds the claim gone, nothing is written, the row is not kept', async () => {
    const { h, err } = await failing({ records: [reservationRow({ state: 'admitted', binding: null })], claims: [claimedRow(1, 'create')], claimHeld: false });
    expect(err).toBeInstanceOf(ClaimLost);
    // The tenant's namespace is prepared (idempotent: the same objects whoever writes them), no CR created.
    expect(h.calls.map((c) => c.op)).toEqual(['ensureTenantSpace']);
    expect(kinds(h)).toEqual(['outbox retry']); // its give-back matches nothing in the real ledger (the claim is gone)
    expect(h.kept).toEqual([]);
    expect(await h.count('delivered')).toBe(0);
  });

  it("the tenant's namespace is prepared before its CR, in the tenant's namespace; a namespace that cannot be used creates no CR and is retried with its code", async () => {
    const { h } = await reconcile({ records: [reservationRow({ state: 'admitted', binding: null })], claims: [claimedRow(1, 'create')] });
    expect(h.calls[0]?.args).toEqual([KEY.tenant]);
    expect((h.calls[1]?.args[0] as ReturnType<typeof modelService>).metadata.namespace).toBe(NAMESPACE);
    const { h: refused, err } = await failing({
      records: [reservationRow({ state: 'admitted', binding: null })],
      claims: [claimedRow(1, 'create')],
      ensureTenantSpace: new ForeignNamespace("namespace tenants exists and is not ModelDock's"),
    });
    expect(err).toBeInstanceOf(ForeignNamespace);
    expect(refused.calls.map((c) => c.op)).toEqual(['ensureTenantSpace']);
    expect(kinds(refused)).toEqual(['outbox retry']);
    expect(JSON.stringify(refused.writes())).toContain('TenantNamespace: ');
    expect(JSON.stringify(refused.writes())).not.toContain('not ModelDock');
  });

  it('admitted with no create row claimed: a claimed reconcile row re-delivers it (the cron safety net)', async () => {
    const { h, result } = await reconcile({ records: [reservationRow({ state: 'admitted', binding: null })], claims: [claimedRow(3, 'reconcile')] });
    expect(result).toEqual({ requeueAfterMs: 600_000 });
    expect(h.calls.map((c) => c.op)).toEqual(['ensureTenantSpace', 'createModelService']);
    expect(kinds(h)).toEqual(['outbox done', 'binding', '→ delivered']);
  });

  it('AlreadyExists and ours: adopted (bound with its UID), re-read, and the state machine steps at once', async () => {
    const { h, result } = await reconcile({
      records: [reservationRow({ state: 'admitted', binding: null }), reservationRow({ state: 'delivered' })],
      claims: [claimedRow(1, 'create')],
      create: { created: false, object: modelService() },
      modelService: modelService(),
    });
    expect(await h.count('delivered', { outcome: 'adopted' })).toBe(1);
    expect(h.created).toEqual([]); // not ours to skip: it may sit in the cache already
    expect(h.logs.find((l) => l.msg === 'ModelService adopted after AlreadyExists')).toMatchObject({ level: 'info', name: CR_NAME, uid: 'uid-bound' });
    expect(logged(h)).not.toContain('ModelService created');
    expect(h.writes()[1]?.args[5]).toBe('uid-bound');
    expect(h.calls.map((c) => c.op)).toEqual(['ensureTenantSpace', 'createModelService', 'readModelService']);
    expect(result).toEqual({ requeueAfterMs: 600_000 - 60_000 });
    expect(kinds(h)).toEqual(['outbox done', 'binding', '→ delivered', 'looked at']);
  });

  it("AlreadyExists and not ours: conflict (counted, an event on that CR), the row done, the CR never bound", async () => {
    const foreign = modelService({ admissionId: 'OTHER' });
    const { h, result } = await reconcile({
      records: [reservationRow({ state: 'admitted', binding: null }), reservationRow({ state: 'conflict', binding: null })],
      claims: [claimedRow(1, 'create')],
      create: { created: false, object: foreign },
      modelService: foreign,
    });
    expect(result).toEqual({});
    expect(kinds(h)).toEqual(['→ conflict', 'outbox done', 'looked at']);
    expect(h.writes()[0]?.args[4]).toBe('ForeignModelService: a ModelService under its name belongs to another admission: an operator must resolve it');
    expect(h.events[0]?.note).toBe(`a ModelService named ${CR_NAME} exists and is not this admission's`);
    expect(await h.count('conflicts')).toBe(1);
    expect(h.events.map((e) => e.reason)).toEqual(['LedgerConflict']);
  });

  it('a spec that can never be delivered: conflict with the reason, no CR, the row dead and counted', async () => {
    const { h, result } = await reconcile({
      records: [reservationRow({ state: 'admitted', binding: null, spec: { replicas: 1 } }), reservationRow({ state: 'conflict', binding: null })],
      claims: [claimedRow(1, 'create')],
    });
    expect(result).toEqual({});
    expect(h.calls.map((c) => c.op)).not.toContain('createModelService');
    expect(kinds(h)).toEqual(['→ conflict', 'outbox dead', 'looked at']);
    expect(h.writes()[0]?.args[4]).toBe('InvalidSpec: the admitted spec is not a valid ModelService spec');
    expect(h.writes()[1]?.args).toEqual([EPOCH, expect.stringMatching(/^InvalidSpec: /), NOW, NOW, true, KEY.tenant, 1, 'ctl/abc', NOW]);
    expect(await h.count('deadRows', { kind: 'create' })).toBe(1);
    expect(logged(h)).toContain('delivery refused: it cannot succeed');
  });

  it('an image the policy now refuses: conflict with the reason, no CR, the row dead', async () => {
    const { h } = await reconcile({
      records: [reservationRow({ state: 'admitted', binding: null }), reservationRow({ state: 'conflict', binding: null })],
      claims: [claimedRow(1, 'create')],
      allowedRegistries: [{ host: 'registry.example.com', pathPrefix: '' }],
    });
    expect(h.calls.map((c) => c.op)).not.toContain('createModelService');
    expect(String(h.writes()[0]?.args[4])).toMatch(/^ImagePolicy: refused by the image policy at delivery: registry ghcr\.io/);
    expect(kinds(h)).toEqual(['→ conflict', 'outbox dead', 'looked at']);
    expect(await h.count('deadRows', { kind: 'create' })).toBe(1);
  });

  it.each(['Evil/model:1', 'Registry/team/model:1', 'LOCALHOST/model:1'])('%s under docker.io: refused at delivery (the runtime would pull it from another host), no CR', async (image) => {
    const { h } = await reconcile({
      records: [reservationRow({ state: 'admitted', binding: null, spec: { ...SPEC, image } }), reservationRow({ state: 'conflict', binding: null })],
      claims: [claimedRow(1, 'create')],
      allowedRegistries: parseRegistryList('docker.io'),
    });
    expect(h.calls.map((c) => c.op)).not.toContain('createModelService');
    expect(String(h.writes()[0]?.args[4])).toMatch(new RegExp(`^ImagePolicy: refused by the image policy at delivery: registry ${image.split('/')[0]} `));
    expect(kinds(h)).toEqual(['→ conflict', 'outbox dead', 'looked at']);
  });

  it('a refused delivery whose row is no longer ours (its dead mark matched nothing): not counted dead', async () => {
    const { h } = await reconcile({
      records: [reservationRow({ state: 'admitted', binding: null, spec: { replicas: 1 } }), reservationRow({ state: 'conflict', binding: null })],
      claims: [claimedRow(1, 'create')],
      affected: (sql) => (sql.includes('o.attempts = o.attempts + 1') ? 0 : 1),
    });
    expect(await h.count('deadRows')).toBe(0);
    expect(logged(h)).not.toContain('delivery refused: it cannot succeed');
    expect(logged(h)).toContain('delivery refused: it cannot succeed; its outbox row is no longer claimed by us, so it is not marked dead here');
  });

  it('a create that fails for now: the reconcile fails and the row is given back for a retry with backoff', async () => {
    const down = new Error('apiserver unavailable');
    const { h, err } = await failing({ records: [reservationRow({ state: 'admitted', binding: null })], claims: [claimedRow(1, 'create', { attempts: 2 })], create: down });
    expect(err).toBe(down);
    expect(kinds(h)).toEqual(['outbox retry']);
    const [w] = h.writes();
    // The tenant is shown a code; the error itself is in the log.
    expect(w?.args.slice(0, 2)).toEqual([EPOCH, expect.stringMatching(/^Internal: /)]);
    expect(h.logs.find((l) => l.msg === 'outbox row retried later')).toMatchObject({ code: 'Internal', error: 'apiserver unavailable' });
    const retryIn = (w?.args[2] as Date).getTime() - NOW.getTime();
    expect(retryIn).toBeGreaterThanOrEqual(2_000); // third attempt: base 1 s × 2², jittered within [cap/2, cap]
    expect(retryIn).toBeLessThanOrEqual(4_000);
    expect(h.kept).toEqual([]);
    expect(await h.count('deadRows')).toBe(0);
    expect(logged(h)).toContain('outbox row retried later');
  });

  it('a failure that cannot be recorded (the database is down too): the rows stay ours, handed back to the poller', async () => {
    const row = claimedRow(1, 'create');
    const { h, err } = await failing({
      records: [reservationRow({ state: 'admitted', binding: null })],
      claims: [row],
      create: new Error('apiserver unavailable'),
      affected: (sql) => {
        if (sql.includes('o.attempts = o.attempts + 1')) throw new Error('database unavailable');
        return 1;
      },
    });
    expect(err).toEqual(new Error('apiserver unavailable'));
    expect(h.kept).toEqual([row]);
  });

  it('a failure whose claim was lost meanwhile: nothing written, the row not kept, not counted', async () => {
    const { h } = await failing({
      records: [reservationRow({ state: 'admitted', binding: null })],
      claims: [claimedRow(1, 'create')],
      create: new Error('apiserver unavailable'),
      affected: () => 0,
    });
    expect(h.kept).toEqual([]);
    expect(await h.count('deadRows')).toBe(0);
    expect(logged(h)).toContain('outbox row not given back: its claim was lost');
    expect(logged(h)).not.toContain('outbox row retried later');
  });
});

describe('ledger reconciler: the step and its rows', () => {
  it('a claimed delete: the step runs (CR delete, then releasing), the reservation is marked looked at, then the row is done', async () => {
    const { h, result } = await reconcile({ records: [reservationRow({ state: 'deleting' })], claims: [claimedRow(4, 'delete')], modelService: modelService() });
    expect(result).toEqual({ requeueAfterMs: 500 });
    expect(h.calls.map((c) => c.op)).toEqual(['readModelService', 'listPods', 'deleteModelService']);
    expect(kinds(h)).toEqual(['→ releasing', 'looked at', 'outbox done']);
    expect(h.writes()[2]?.args.slice(2, 4)).toEqual([KEY.tenant, 4]);
  });

  it('no such reservation: nothing decided, the claimed rows done', async () => {
    const { h, result } = await reconcile({ records: [], claims: [claimedRow(3, 'reconcile')] });
    expect(result).toEqual({});
    expect(h.calls).toEqual([]);
    expect(kinds(h)).toEqual(['outbox done']);
  });

  it('a step that fails terminally: the claimed rows are dead and counted, and the error is thrown', async () => {
    const { h, err } = await failing({
      records: [reservationRow({ state: 'ready', binding: { everReady: true }, change: { generation: 2, applied: 2, settled: 1, fromReplicas: 3 }, amounts: { ...CHARGED, cpu: 1500, memory: 1536 }, spec: { replicas: 2 } })],
      claims: [claimedRow(5, 'scale')],
      modelService: modelService({ replicas: 2 }),
      deployment: { generation: 3, observedGeneration: 3, specReplicas: 2, statusReplicas: 2 },
    });
    expect(err).toMatchObject({ reason: 'InvalidSpec' });
    expect(kinds(h)).toEqual(['outbox dead']);
    expect(await h.count('deadRows', { kind: 'scale' })).toBe(1);
    expect(logged(h)).toContain('outbox row is dead: its error cannot be retried away');
  });

  it.each([
    { name: 'never looked at', lastReconciledAt: null, touched: true },
    { name: 'looked at 30 s ago', lastReconciledAt: ago(30_000), touched: false },
    { name: 'looked at 61 s ago', lastReconciledAt: ago(61_000), touched: true },
  ])('the cron sweep is told the reservation was looked at at most once a minute: $name', async ({ lastReconciledAt, touched }) => {
    const { h, result } = await reconcile({ records: [reservationRow({ state: 'ready', binding: { everReady: true }, lastReconciledAt })], cached: modelService({ ready: true }) });
    expect(result).toEqual({});
    expect(h.calls).toEqual([]);
    expect(h.writes()).toEqual(touched ? [{ sql: expect.stringMatching(/SET r\.last_reconciled_at = \?/), args: [EPOCH, NOW, KEY.tenant, KEY.id], tx: null }] : []);
  });
});
