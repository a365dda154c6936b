// The ONE mapping between quota resources and ledger columns, and the arithmetic of charging and
// releasing. `tenant_quota` holds one row per (tenant, resource); `reservation` and
// `quota_movement` hold one column per resource. Every statement that reads or writes amounts
// builds its column list and its CASE expressions from here, so adding a resource is one line.
import { RESOURCE_NAMES, type Amounts, type ResourceName } from '../schema/model-service.ts';
import { int } from './columns.ts';
import type { Row } from './db.ts';

export { RESOURCE_NAMES, type ResourceName };

/** The `reservation` / `quota_movement` column holding each resource's amount (ledger units). */
export const AMOUNT_COLUMNS: Readonly<Record<ResourceName, string>> = {
  cpu: 'cpu_millis',
  memory: 'memory_mib',
  'nvidia.com/gpu': 'gpu',
  modelservices: 'modelservices',
};

/** `cpu_millis, memory_mib, gpu, modelservices` (optionally `r.cpu_millis, …`), in RESOURCE_NAMES order. */
export const amountColumns = (alias?: string): string => RESOURCE_NAMES.map((r) => (alias ? `${alias}.` : '') + AMOUNT_COLUMNS[r]).join(', ');

/** `<prefix>_cpu_millis, <prefix>_memory_mib, …`: the amount columns of the cluster tables (capacity, pool, allotted, …; ledger/sql/0012_clusters.sql). */
export const prefixedAmountColumns = (prefix: string, alias?: string): string => RESOURCE_NAMES.map((r) => `${alias ? `${alias}.` : ''}${prefix}_${AMOUNT_COLUMNS[r]}`).join(', ');

/** `?, ?, ?, ?`: one placeholder per amount column. */
export const AMOUNT_PLACEHOLDERS = RESOURCE_NAMES.map(() => '?').join(', ');

/** Statement arguments for `amountColumns()`, in the same order. */
export const amountArgs = (a: Amounts): number[] => RESOURCE_NAMES.map((r) => a[r]);

/** Reads the amount columns of a row (selected with `amountColumns()`, optionally under a prefix). */
export function amountsFromRow(row: Row, prefix = ''): Amounts {
  const out = {} as Amounts;
  for (const r of RESOURCE_NAMES) out[r] = int(row[prefix + AMOUNT_COLUMNS[r]]);
  return out;
}

/** The resources an amount charges (non-zero ones); a charge of nothing touches no quota row. */
export const chargedResources = (a: Amounts): ResourceName[] => RESOURCE_NAMES.filter((r) => a[r] > 0);

/**
 * The release arithmetic with the amounts as arguments, for a statement that names the tenant
 * (`UPDATE tenant_quota SET <sql> WHERE tenant = ? AND resource IN (?)`, single-shard on Vitess):
 * `used = used - CASE resource WHEN ? THEN ? … ELSE 0 END` and its arguments.
 */
export function releaseUsageByAmounts(a: Amounts): { sql: string; args: Array<string | number> } {
  return {
    sql: `used = used - CASE resource ${RESOURCE_NAMES.map(() => 'WHEN ? THEN ?').join(' ')} ELSE 0 END`,
    args: RESOURCE_NAMES.flatMap((r) => [r, a[r]]),
  };
}

/** The sum of two amounts, per resource. */
/** Amounts with `f(r)` for each resource. */
export const amountsOf = (f: (r: ResourceName) => number): Amounts => Object.fromEntries(RESOURCE_NAMES.map((r) => [r, f(r)])) as Amounts;

export const addAmounts = (a: Amounts, b: Amounts): Amounts => amountsOf((r) => a[r] + b[r]);
