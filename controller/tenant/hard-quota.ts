// The tenant's hard quota as the ledger holds it (tenant_quota.hard, set by an operator with
// `npm run tenant -- set`): what the tenant namespace's ResourceQuota mirrors (quota.ts). One
// statement naming the tenant (single-shard on Vitess, docs/vitess-statements.md).
import type { Queryable } from '../../ledger/db.ts';
import { int, str } from '../../ledger/columns.ts';
import { RESOURCE_NAMES, type Amounts, type ResourceName } from '../../schema/model-service.ts';

const isResource = (name: string): name is ResourceName => (RESOURCE_NAMES as readonly string[]).includes(name);

export async function readHardQuota(q: Queryable, tenant: string): Promise<Partial<Amounts>> {
  const r = await q.execute('SELECT resource, hard FROM tenant_quota WHERE tenant = ?', [tenant]);
  const out: Partial<Amounts> = {};
  for (const row of r.rows) {
    const name = str(row.resource);
    if (isResource(name)) out[name] = int(row.hard);
  }
  return out;
}
