// Anchors on the run's 2-shard Vitess ledger (docs/multi-cluster.md, "Anchors"; ledger/anchors.ts),
// through the production driver (@planetscale/database → ps-http-sim → vtgate, transaction mode
// SINGLE): the keyspace ids computed in TypeScript (XXH64, little-endian) are the ones vtgate
// routes by and its vindex function returns, each shard gets an anchor that routes to it, a
// transaction that writes a tenant's row and locks and writes its shard anchor's row commits, and
// the other shard's anchor in that transaction is refused and leaves nothing behind. Anchor rows are
// tenant_quota rows keyed by the anchor (no migration needed).
import { connect, DatabaseError } from '@planetscale/database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anchorName, anchorsOf, isCrossShard, keyspaceId, shardOfTenant, xxh64, type ShardAnchor } from '../../ledger/anchors.ts';
import { int, str } from '../../ledger/columns.ts';
import type { Queryable } from '../../ledger/db.ts';
import { ledgerShards, type LedgerShard } from '../../ledger/shards.ts';
import { vitessLedger } from '../support/vitess.ts';

const V = vitessLedger();
/** The resource of this run's anchor rows (tenant_quota keyed by an anchor). */
const RES = V.tenant('anchor');
let shards: LedgerShard[];
let anchors: ShardAnchor[];

const insertQuota = 'INSERT INTO tenant_quota (tenant, resource, hard, used, updated_at) VALUES (?, ?, ?, 0, UTC_TIMESTAMP(3))';
const used = async (tenant: string, resource: string) =>
  int((await V.db.execute('SELECT used FROM tenant_quota WHERE tenant = ? AND resource = ?', [tenant, resource])).rows[0]?.used);
const anchorOf = (shard: LedgerShard) => anchors.find((a) => a.shard.name === shard.name)?.anchor ?? '';
const otherAnchor = (shard: LedgerShard) => anchors.find((a) => a.shard.name !== shard.name)?.anchor ?? '';

/** A fresh tenant with a cpu quota row, and its shard. */
async function tenantWithQuota(): Promise<{ tenant: string; shard: LedgerShard }> {
  const tenant = V.tenant('anc');
  await V.db.execute(insertQuota, [tenant, 'cpu', 1000]);
  return { tenant, shard: shardOfTenant(shards, tenant) };
}

/** The charge of T1 in miniature: the tenant's row first, the anchor's row last (locked, then written). */
async function chargeWithAnchor(tx: Queryable, tenant: string, anchor: string, step: (s: string) => void): Promise<void> {
  step('tenant update');
  expect((await tx.execute('UPDATE tenant_quota SET used = used + 1 WHERE tenant = ? AND resource = ?', [tenant, 'cpu'])).rowsAffected).toBe(1);
  step('anchor lock');
  expect((await tx.execute('SELECT used FROM tenant_quota WHERE tenant = ? AND resource = ? FOR UPDATE', [anchor, RES])).rows).toHaveLength(1);
  step('anchor update');
  expect((await tx.execute('UPDATE tenant_quota SET used = used + 1 WHERE tenant = ? AND resource = ?', [anchor, RES])).rowsAffected).toBe(1);
}

beforeAll(async () => {
  shards = await ledgerShards(V.db);
  anchors = anchorsOf(shards);
  for (const { anchor } of anchors) {
    await V.db.execute('DELETE FROM tenant_quota WHERE tenant = ? AND resource = ?', [anchor, RES]);
    await V.db.execute(insertQuota, [anchor, RES, 1_000_000]);
  }
});

afterAll(async () => {
  for (const { anchor } of anchors ?? []) await V.db.execute('DELETE FROM tenant_quota WHERE tenant = ? AND resource = ?', [anchor, RES]);
});

describe('anchors on the 2-shard ledger', () => {
  it('each shard gets a distinct anchor (~a1 on -80, ~a0 on 80-), and a row keyed by it lives on that shard', async () => {
    expect(anchors.map((a) => [a.shard.name, a.anchor])).toEqual([
      ['ledger/-80', '~a1'],
      ['ledger/80-', '~a0'],
    ]);
    // The routed insert (beforeAll) put each anchor's row on its shard: read each shard as written.
    for (const { shard, anchor } of anchors) {
      for (const s of shards) {
        const found = await s.db.execute('SELECT tenant FROM tenant_quota WHERE tenant = ? AND resource = ?', [anchor, RES]);
        expect(found.rows.length, `${anchor} on ${s.name}`).toBe(s.name === shard.name ? 1 : 0);
      }
    }
  });

  it('the computed shard of every candidate and of 48 tenants is where vtgate routes them (little-endian, not big-endian)', async () => {
    const ids = [...Array.from({ length: 16 }, (_, i) => anchorName(i)), ...Array.from({ length: 47 }, () => V.tenant('route')), 'a'.repeat(63)];
    const bigEndianShard = (id: string) => (xxh64(new TextEncoder().encode(id)) >> 63n === 0n ? '-80' : '80-');
    let tellApart = 0;
    for (const id of ids) {
      const routed = await V.db.execute('VEXPLAIN QUERIES SELECT resource FROM tenant_quota WHERE tenant = ?', [id]);
      const mine = shardOfTenant(shards, id).name.replace('ledger/', '');
      expect(routed.rows.map((row) => str(row.shard)), id).toEqual([mine]);
      if (bigEndianShard(id) !== mine) tellApart++;
    }
    expect(tellApart).toBeGreaterThan(0);
  });

  it('vtgate’s vindex function agrees, on a session whose default keyspace is the ledger (ours have none: VT09005)', async () => {
    const ids = [...anchors.map((a) => a.anchor), 'acme', 'a'.repeat(63)];
    const vindexQuery = 'SELECT id, hex_keyspace_id, shard FROM ledger.tenant WHERE id IN (?)';
    const refused = await V.db.execute(vindexQuery, [ids]).then(
      () => 'answered',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(refused).toMatch(/VT09005: no database selected/);
    const conn = connect({ url: V.url });
    await conn.execute('USE ledger');
    const r = await conn.execute(vindexQuery, [ids]);
    const text = (v: unknown) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : str(v));
    const got = Object.fromEntries((r.rows as Record<string, unknown>[]).map((row) => [text(row.id), [text(row.hex_keyspace_id), text(row.shard)]]));
    expect(got).toEqual(Object.fromEntries(ids.map((id) => [id, [keyspaceId(id), shardOfTenant(shards, id).name.replace('ledger/', '')]])));
  });

  it('the shard of a tenant is the one its rows live on', async () => {
    for (let i = 0; i < 8; i++) {
      const { tenant, shard } = await tenantWithQuota();
      for (const s of shards) expect((await s.db.execute('SELECT tenant FROM tenant_quota WHERE tenant = ?', [tenant])).rows.length, `${tenant} on ${s.name}`).toBe(s === shard ? 1 : 0);
    }
  });

  it('a SINGLE-mode transaction writing a tenant’s row and locking and writing its shard anchor’s row commits, on each shard', async () => {
    const onShard = new Map<string, { tenant: string; shard: LedgerShard }>();
    for (let i = 0; i < 64 && onShard.size < shards.length; i++) {
      const t = await tenantWithQuota();
      if (!onShard.has(t.shard.name)) onShard.set(t.shard.name, t);
    }
    expect([...onShard.keys()].sort()).toEqual(shards.map((s) => s.name));
    for (const { tenant, shard } of onShard.values()) {
      const anchor = anchorOf(shard);
      const before = await used(anchor, RES);
      await V.db.transaction((tx) => chargeWithAnchor(tx, tenant, anchor, () => undefined));
      expect(await used(tenant, 'cpu')).toBe(1);
      expect(await used(anchor, RES)).toBe(before + 1);
    }
  });

  it('the other shard’s anchor in that transaction is refused (1317) at its write and rolled back; the retry with its own anchor commits', async () => {
    const { tenant, shard } = await tenantWithQuota();
    const wrong = otherAnchor(shard);
    const right = anchorOf(shard);
    const [wrongBefore, rightBefore] = [await used(wrong, RES), await used(right, RES)];
    let at = '';
    const err = await V.db.transaction((tx) => chargeWithAnchor(tx, tenant, wrong, (s) => (at = s))).then(
      () => undefined,
      (e: unknown) => e,
    );
    console.log(`[anchors] refused at "${at}": ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    expect(err).toBeInstanceOf(DatabaseError);
    expect((err as DatabaseError).message).toMatch(/multi-db transaction attempted/);
    expect((err as DatabaseError).message).toMatch(/errno 1317\b/);
    expect(isCrossShard(err)).toBe(true);
    // Not the read: a read in a SINGLE transaction (even FOR UPDATE, which locks the row there) opens a
    // read-only shard session that the check does not count; the first WRITE on the second shard is refused.
    expect(at).toBe('anchor update');
    expect(await used(tenant, 'cpu')).toBe(0);
    expect(await used(wrong, RES)).toBe(wrongBefore);

    // The retry: the tenant's shard and its anchor, from the shard list read again.
    const again = shardOfTenant(await ledgerShards(V.db), tenant);
    await V.db.transaction((tx) => chargeWithAnchor(tx, tenant, anchorOf(again), () => undefined));
    expect(await used(tenant, 'cpu')).toBe(1);
    expect(await used(right, RES)).toBe(rightBefore + 1);
    expect(await used(wrong, RES)).toBe(wrongBefore);
  });
});
