// `npm run tenant -- set acme cpu=8 memory=32Gi nvidia.com/gpu=2 modelservices=20`  create/update hard limits
//   (a tenant set up without a modelservices limit gets MODELDOCK_DEFAULT_MODELSERVICES, default 20)
// `npm run tenant -- backfill-count`                              the default count limit for every tenant without one
// `npm run tenant -- show acme`                                     hard and used per resource
// `npm run tenant -- key acme`                                      a new API key + its digest
// Quantities are Kubernetes quantities, stored in ledger units (millicores, MiB, count).
// Lowering a limit below what is in use is allowed: it only blocks new admissions.
import { randomBytes, createHash } from 'node:crypto';
import { RESOURCE_NAMES, RESOURCE_UNITS, type ResourceName } from '../schema/model-service.ts';
import { tenantName } from '../schema/admission.ts';
import { createDb, type Db } from '../ledger/db.ts';
import { ensureHard, readQuota, setHard } from '../functions/db/quota.ts';
import { databaseUrlFromEnv } from './database-url.ts';


export class UsageError extends Error {}

export function parseLimits(args: string[]): Partial<Record<ResourceName, number>> {
  if (args.length === 0) throw new UsageError('give at least one limit, e.g. cpu=8 memory=32Gi nvidia.com/gpu=2 modelservices=20');
  const out: Partial<Record<ResourceName, number>> = {};
  for (const arg of args) {
    const [name, value, ...rest] = arg.split('=');
    if (!name || value === undefined || rest.length > 0) throw new UsageError(`"${arg}" is not <resource>=<quantity>`);
    if (!(RESOURCE_NAMES as readonly string[]).includes(name)) throw new UsageError(`unknown resource "${name}" (known: ${RESOURCE_NAMES.join(', ')})`);
    const parse = RESOURCE_UNITS[name as ResourceName].parse;
    try {
      out[name as ResourceName] = parse(value);
    } catch (err) {
      throw new UsageError(`${name}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** The count limit a tenant gets when it is set up without one (`MODELDOCK_DEFAULT_MODELSERVICES`). */
export function defaultModelServices(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.MODELDOCK_DEFAULT_MODELSERVICES ?? '20';
  if (!/^\d{1,6}$/.test(raw)) throw new UsageError(`MODELDOCK_DEFAULT_MODELSERVICES must be a whole number, not "${raw}"`);
  return Number(raw);
}

export async function setTenantQuota(db: Db, tenant: string, limits: Partial<Record<ResourceName, number>>, now = new Date()): Promise<void> {
  if (!tenantName.safeParse(tenant).success) throw new UsageError(`tenant "${tenant}" is not a DNS-1123 label`);
  const count = defaultModelServices();
  await db.transaction(async (tx) => {
    for (const r of RESOURCE_NAMES) {
      const hard = limits[r];
      if (hard !== undefined) await setHard(tx, tenant, r, hard, now);
    }
    // Every admission costs one modelservices: without a row the tenant could admit nothing.
    if (limits.modelservices === undefined) await ensureHard(tx, tenant, 'modelservices', count, now);
  });
}

/**
 * Gives every tenant that has a quota but no `modelservices` limit the default (after migration
 * 0003). The tenant list is read once; each tenant's row is its own statement (single-shard).
 */
export async function backfillCount(db: Db, now = new Date()): Promise<string[]> {
  const count = defaultModelServices();
  const tenants = (await db.execute('SELECT DISTINCT tenant FROM tenant_quota')).rows.map((r) => String(r.tenant));
  const added: string[] = [];
  for (const tenant of tenants) {
    const q = await readQuota(db, tenant);
    if (q.modelservices) continue;
    await ensureHard(db, tenant, 'modelservices', count, now);
    added.push(tenant);
  }
  return added;
}

async function show(db: Db, tenant: string): Promise<void> {
  const q = await readQuota(db, tenant);
  for (const r of RESOURCE_NAMES) {
    const row = q[r];
    console.log(`${tenant}\t${r.padEnd(15)}\thard=${row?.hard ?? 0}\tused=${row?.used ?? 0}\t${RESOURCE_UNITS[r].unit}`);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, tenant, ...rest] = argv;
  if (command === 'backfill-count') {
    const added = await backfillCount(createDb({ url: databaseUrlFromEnv() }));
    console.log(added.length ? `modelservices=${defaultModelServices()} for: ${added.join(', ')}` : 'every tenant has a modelservices limit');
    return;
  }
  if (!command || !tenant || !['set', 'show', 'key'].includes(command)) {
    throw new UsageError('usage: npm run tenant -- set <tenant> cpu=8 memory=32Gi nvidia.com/gpu=2 modelservices=20 | show <tenant> | key <tenant> | backfill-count');
  }
  if (command === 'key') {
    const key = `mdk_${randomBytes(24).toString('base64url')}`;
    console.log(`key (give it to the tenant):            ${key}`);
    console.log(`ADMISSION_KEYS_JSON entry (digest only): "${tenant}": "sha256:${createHash('sha256').update(key).digest('hex')}"`);
    return;
  }
  const db = createDb({ url: databaseUrlFromEnv() });
  if (command === 'set') await setTenantQuota(db, tenant, parseLimits(rest));
  await show(db, tenant);
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof UsageError ? err.message : err);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
}
