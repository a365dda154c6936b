// The Vitess backend itself, through the production driver (@planetscale/database →
// ps-http-sim → vtgate): the keyspaces are there and migrated, a single-tenant transaction
// commits, and a transaction that reaches a second shard is refused (transaction mode SINGLE)
// and leaves nothing behind.
import { describe, expect, it } from 'vitest';
import { str } from '../../ledger/columns.ts';
import { vitessLedger } from '../support/vitess.ts';

const V = vitessLedger();

/** The shard of the `ledger` keyspace a tenant's rows live on: where vtgate sends a read by tenant. */
async function shardOf(tenant: string): Promise<string> {
  const r = await V.db.execute('VEXPLAIN QUERIES SELECT resource FROM tenant_quota WHERE tenant = ?', [tenant]);
  const shards = r.rows.map((row) => str(row.shard));
  expect(shards).toHaveLength(1);
  return shards[0] ?? '';
}

/** Two fresh tenants whose rows live on different shards. */
async function tenantsOnTwoShards(): Promise<[string, string]> {
  const first = V.tenant('smoke');
  const home = await shardOf(first);
  for (let i = 0; i < 64; i++) {
    const other = V.tenant('smoke');
    if ((await shardOf(other)) !== home) return [first, other];
  }
  throw new Error('64 tenants hashed to one shard');
}

const quotaRows = async (tenant: string) =>
  (await V.db.execute('SELECT resource, hard, used FROM tenant_quota WHERE tenant = ? ORDER BY resource', [tenant])).rows.map((r) => ({
    resource: r.resource,
    hard: Number(r.hard),
    used: Number(r.used),
  }));

const insertQuota = 'INSERT INTO tenant_quota (tenant, resource, hard, used, updated_at) VALUES (?, ?, ?, 0, UTC_TIMESTAMP(3))';

describe('the Vitess ledger backend', () => {
  it('has the 2-shard ledger keyspace and the global keyspace, migrated', async () => {
    const shards = (await V.db.execute('SHOW VITESS_SHARDS')).rows.map((r) => String(Object.values(r)[0])).sort();
    expect(shards).toEqual(['global/0', 'ledger/-80', 'ledger/80-']);
    const migrated = await V.db.execute('SELECT COUNT(*) AS n FROM global.schema_migrations');
    expect(Number(migrated.rows[0]?.n)).toBeGreaterThan(0);
  });

  it('commits a single-tenant transaction (read, write, conditional update on one shard)', async () => {
    const tenant = V.tenant('one');
    await V.db.transaction(async (tx) => {
      await tx.execute(insertQuota, [tenant, 'cpu', 4000]);
      await tx.execute(insertQuota, [tenant, 'memory', 8192]);
      await tx.execute('SELECT resource FROM tenant_quota WHERE tenant = ? FOR UPDATE', [tenant]);
      const r = await tx.execute('UPDATE tenant_quota SET used = used + 500 WHERE tenant = ? AND resource = ? AND used + 500 <= hard', [tenant, 'cpu']);
      expect(r.rowsAffected).toBe(1);
    });
    expect(await quotaRows(tenant)).toEqual([
      { resource: 'cpu', hard: 4000, used: 500 },
      { resource: 'memory', hard: 8192, used: 0 },
    ]);
  });

  it('refuses a transaction that reaches a second shard, and the rollback leaves nothing behind', async () => {
    const [a, b] = await tenantsOnTwoShards();
    const err = await V.db
      .transaction(async (tx) => {
        await tx.execute(insertQuota, [a, 'cpu', 1000]);
        await tx.execute(insertQuota, [b, 'cpu', 1000]);
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/multi-db transaction attempted|transaction_mode/i);
    expect(await quotaRows(a)).toEqual([]);
    expect(await quotaRows(b)).toEqual([]);
  });

  it('the same two tenants each commit in their own transaction', async () => {
    const [a, b] = await tenantsOnTwoShards();
    for (const t of [a, b]) await V.db.transaction(async (tx) => void (await tx.execute(insertQuota, [t, 'cpu', 1000])));
    expect(await quotaRows(a)).toEqual([{ resource: 'cpu', hard: 1000, used: 0 }]);
    expect(await quotaRows(b)).toEqual([{ resource: 'cpu', hard: 1000, used: 0 }]);
  });
});
