// `npm run tenant -- set acme cpu=8 memory=32Gi nvidia.com/gpu=2 modelservices=20`  create/update hard limits
//   (a tenant set up without a modelservices limit gets MODELDOCK_DEFAULT_MODELSERVICES, default 20)
// `npm run tenant -- backfill-count`                              the default count limit for every tenant without one
// `npm run tenant -- show acme`                                     hard and used per resource
// `npm run tenant -- key acme`                                      a new API key, its digest and its key id
// `npm run tenant -- resolve <admission-id> --release|--keep --reason "…"`
//     an operator's decision on a conflict (operator/resolve.ts): refused (exit 3) while
//     the cluster still has the CR with the bound UID or a pod of the admission. Needs
//     DATABASE_URL and an operator's kubeconfig (KUBECONFIG); the CR and pods are looked for in
//     every namespace.
// `npm run tenant -- queue`                                         per shard, the tenants with queued admissions,
//     each head and why it waits (operator/queue-report.ts; reads only)
// `npm run tenant -- affinity acme c1,c3`                          the clusters the `affinity` placement policy
//     (PLACEMENT_POLICY=affinity) tries first for acme's admissions, in this order ('' clears them)
// `npm run tenant -- queue-bypass acme 5`                           how many later, smaller admissions may pass a
//     head that does not fit (tenant_quota.queue_max_bypass, default 3; 0: strict FIFO)
// `npm run tenant -- weight acme 2`                                acme's weight in the cross-tenant fair pick of
//     freed cluster room (tenant_quota.fair_weight, default 1; ledger/fair-pick.ts)
// Quantities are Kubernetes quantities, stored in ledger units (millicores, MiB, count).
// Lowering a limit below what is in use is allowed: it only blocks new admissions.
import { randomBytes, createHash } from 'node:crypto';
import { RESOURCE_NAMES, RESOURCE_UNITS, type ResourceName } from '../schema/model-service.ts';
import { tenantName } from '../schema/admission.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { admissionId } from '../schema/admission.ts';
import { createDb, type Db } from '../ledger/db.ts';
import { resolveAdmission, ResolveRefused } from './operator/resolve.ts';
import type { Resolution } from './operator/resolve-conflict.ts';
import { KubeClient } from '../controller/runtime/kube.ts';
import { ensureHard, readQuota, setHard } from '../functions/db/quota.ts';
import { byWorker, dequeueFor } from '../ledger/queue-fair.ts';
import { databaseUrlFromEnv } from './database-url.ts';
import { keyIdOf } from '../functions/auth/key-id.ts';
import { globalQueue, QUEUE_SETTINGS, setQueueSetting, tenantQueueLines, type QueueSetting } from './operator/queue-report.ts';
import { createPlacer, writeAffinity } from '../ledger/placement.ts';
import { CLUSTER_NAME, notAClusterName } from '../ledger/clusters.ts';
import { placementPolicy } from '../ledger/placement-policy.ts';


/** The placement of a dequeue run from here, as the Worker's PLACEMENT_POLICY makes it. */
const placerFromEnv = () => createPlacer({ policy: placementPolicy(process.env.PLACEMENT_POLICY) });

export class UsageError extends Error {}

/** What `key <tenant>` prints for a new key: the key, its id (what the Worker's logs name it by) and its digest entry. */
export async function newKeyLines(tenant: string, key: string): Promise<string[]> {
  const digest = createHash('sha256').update(key).digest();
  return [
    `key (give it to the tenant):            ${key}`,
    `key id (in the Worker's request logs):  ${await keyIdOf(digest)}`,
    `ADMISSION_KEYS_JSON entry (digest only): "${tenant}": "sha256:${digest.toString('hex')}"`,
    `  (rotating: add the digest to the tenant's list, "${tenant}": ["sha256:<old>", "sha256:<new>"]; docs/admission-api.md "API keys")`,
  ];
}

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
    const { quota } = await readQuota(db, tenant);
    if (quota.modelservices) continue;
    await ensureHard(db, tenant, 'modelservices', count, now);
    added.push(tenant);
  }
  return added;
}

export interface ResolveArgs {
  id: string;
  decision: Resolution;
  reason: string;
}

/** `<admission-id> --release|--keep --reason "…"` (the reason is required: it is the audit trail). */
export function parseResolveArgs(args: string[]): ResolveArgs {
  const usage = 'usage: npm run tenant -- resolve <admission-id> --release|--keep --reason "why"';
  let id: string | undefined;
  let decision: Resolution | undefined;
  let reason: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--release' || a === '--keep') {
      const d = a === '--release' ? 'release' : 'keep';
      if (decision && decision !== d) throw new UsageError(`give --release or --keep, not both\n${usage}`);
      decision = d;
    } else if (a === '--reason') {
      reason = args[++i];
    } else if (a.startsWith('--reason=')) {
      reason = a.slice('--reason='.length);
    } else if (!a.startsWith('--') && id === undefined) {
      id = a;
    } else {
      throw new UsageError(`unexpected argument "${a}"\n${usage}`);
    }
  }
  if (!id || !admissionId.safeParse(id).success) throw new UsageError(`give an admission id (a ULID)\n${usage}`);
  if (!decision) throw new UsageError(`give --release or --keep\n${usage}`);
  if (!reason?.trim()) throw new UsageError(`give --reason "…" (recorded with the decision)\n${usage}`);
  if (reason.length > 1000) throw new UsageError('the reason is longer than 1000 characters');
  return { id, decision, reason: reason.trim() };
}

async function resolve(args: string[]): Promise<void> {
  const { id, decision, reason } = parseResolveArgs(args);
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const db = createDb({ url: databaseUrlFromEnv() });
  const deps = { db, kube: new KubeClient({ kc, timeoutMs: 15_000 }), now: () => new Date() };
  const after = await resolveAdmission(deps, id, decision, reason);
  console.log(`${after.id}\ttenant=${after.tenant}\tstate=${after.state}\tdecision=${decision}${decision === 'release' ? '\tquota released' : '\tcharge kept'}`);
}

async function show(db: Db, tenant: string): Promise<void> {
  const { quota, queued } = await readQuota(db, tenant);
  for (const r of RESOURCE_NAMES) {
    const row = quota[r];
    console.log(`${tenant}\t${r.padEnd(15)}\thard=${row?.hard ?? 0}\tused=${row?.used ?? 0}\t${RESOURCE_UNITS[r].unit}`);
  }
  console.log(`${tenant}\tqueued=${queued}`);
}

const SETTING_USAGE: Record<QueueSetting, string> = {
  'queue-bypass': `usage: npm run tenant -- queue-bypass <tenant> <K>   (K: 0..${QUEUE_SETTINGS['queue-bypass'].max}; 0 is strict FIFO)`,
  weight: `usage: npm run tenant -- weight <tenant> <w>   (w: 1..${QUEUE_SETTINGS.weight.max}; the share of the clusters' capacity it gets while tenants wait, relative to others)`,
};

/** `queue-bypass <tenant> <K>` and `weight <tenant> <w>`: the tenant and a whole number in the setting's range. */
export function parseSettingArgs(setting: QueueSetting, args: readonly string[]): { tenant: string; value: number } {
  const usage = SETTING_USAGE[setting];
  const { min, max } = QUEUE_SETTINGS[setting];
  const [tenant, value, ...rest] = args;
  if (!tenant || value === undefined || rest.length > 0) throw new UsageError(usage);
  if (!tenantName.safeParse(tenant).success) throw new UsageError(`tenant "${tenant}" is not a DNS-1123 label`);
  if (!/^\d{1,4}$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`${setting} must be a whole number from ${min} to ${max} (got "${value}")\n${usage}`);
  return { tenant, value: Number(value) };
}

async function queue(db: Db): Promise<void> {
  const now = new Date();
  let tenants = 0;
  for await (const q of globalQueue(db)) {
    tenants++;
    for (const line of tenantQueueLines(q, now)) console.log(line);
  }
  if (tenants === 0) console.log('no tenant has queued admissions');
}

async function queueSetting(setting: QueueSetting, args: readonly string[]): Promise<void> {
  const { tenant, value } = parseSettingArgs(setting, args);
  const db = createDb({ url: databaseUrlFromEnv() });
  if (!(await setQueueSetting(db, tenant, setting, value))) throw new UsageError(`tenant "${tenant}" has no quota (npm run tenant -- set ${tenant} …)`);
  console.log(`${tenant}\t${QUEUE_SETTINGS[setting].column}=${value}`);
  if (setting === 'weight') return; // the next freed room is offered by the new weights
  // A larger budget may let a smaller admission pass the head now rather than at the next release.
  const moved = await dequeueFor(db, tenant, { byFor: byWorker, now: () => new Date(), requestId: `tenant-queue-bypass:${tenant}`, placer: placerFromEnv() });
  if (moved.admitted.length > 0 || moved.expired > 0) console.log(`${tenant}\tfrom the queue: admitted=${moved.admitted.length} expired=${moved.expired}`);
}

/** `affinity <tenant> <c1,c2,…>`: checked names, at most one rank per cluster. */
export function parseAffinityArgs(args: readonly string[]): { tenant: string; clusters: string[] } {
  const [tenant, list, ...extra] = args;
  if (!tenant || list === undefined || extra.length > 0) throw new UsageError('usage: npm run tenant -- affinity <tenant> <c1,c2,…>   ("" clears it)');
  if (!tenantName.safeParse(tenant).success) throw new UsageError(`"${tenant}" is not a tenant name`);
  const clusters = list === '' ? [] : list.split(',');
  for (const c of clusters) if (!CLUSTER_NAME.test(c)) throw new UsageError(notAClusterName(c));
  if (new Set(clusters).size !== clusters.length) throw new UsageError('a cluster is named twice');
  return { tenant, clusters };
}

async function affinity(args: readonly string[]): Promise<void> {
  const { tenant, clusters } = parseAffinityArgs(args);
  await writeAffinity(createDb({ url: databaseUrlFromEnv() }), tenant, clusters);
  console.log(`${tenant}	affinity=${clusters.join(',') || '(none)'}`);
}

async function main(argv: string[]): Promise<void> {
  const [command, tenant, ...rest] = argv;
  if (command === 'resolve') return resolve(argv.slice(1));
  if (command === 'queue') {
    if (argv.length > 1) throw new UsageError('usage: npm run tenant -- queue   (every shard; no arguments)');
    return queue(createDb({ url: databaseUrlFromEnv() }));
  }
  if (command === 'queue-bypass' || command === 'weight') return queueSetting(command, argv.slice(1));
  if (command === 'affinity') return affinity(argv.slice(1));
  if (command === 'backfill-count') {
    const added = await backfillCount(createDb({ url: databaseUrlFromEnv() }));
    console.log(added.length ? `modelservices=${defaultModelServices()} for: ${added.join(', ')}` : 'every tenant has a modelservices limit');
    return;
  }
  if (!command || !tenant || !['set', 'show', 'key'].includes(command)) {
    throw new UsageError(
      'usage: npm run tenant -- set <tenant> cpu=8 memory=32Gi nvidia.com/gpu=2 modelservices=20 | show <tenant> | key <tenant> | backfill-count | queue | queue-bypass <tenant> <K> | weight <tenant> <w> | affinity <tenant> <c1,c2,…> | resolve <admission-id> --release|--keep --reason "why"',
    );
  }
  if (command === 'key') {
    for (const line of await newKeyLines(tenant, `mdk_${randomBytes(24).toString('base64url')}`)) console.log(line);
    return;
  }
  const db = createDb({ url: databaseUrlFromEnv() });
  if (command === 'set') {
    await setTenantQuota(db, tenant, parseLimits(rest));
    // A raised limit may let queued admissions in now rather than at the next release or cron run.
    const moved = await dequeueFor(db, tenant, { byFor: byWorker, now: () => new Date(), requestId: `tenant-set:${tenant}`, placer: placerFromEnv() });
    if (moved.admitted.length > 0 || moved.expired > 0) console.log(`${tenant}\tfrom the queue: admitted=${moved.admitted.length} expired=${moved.expired}`);
  }
  await show(db, tenant);
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof UsageError || err instanceof ResolveRefused ? `${err instanceof ResolveRefused ? 'refused: ' : ''}${err.message}` : err);
    process.exitCode = err instanceof UsageError ? 2 : err instanceof ResolveRefused ? 3 : 1;
  });
}
