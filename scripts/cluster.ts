// The operator's clusters (docs/multi-cluster.md; operator/cluster-admin.ts does the writing):
// `npm run cluster -- add eu-1 cpu=64 memory=256Gi nvidia.com/gpu=8 modelservices=200 [--lease 15s] [--reason "…"]`
//     a new cluster, joining, its capacity spread over the pool and every shard's allotment.
//     Re-running it with the same definition completes an add a crash interrupted.
// `npm run cluster -- drain eu-1 [--reason "…"]`    no new placement there; what runs there stays
// `npm run cluster -- ready eu-1 [--reason "…"]`    takes placements again (draining, or lost once its controller is back)
// `npm run cluster -- forget eu-1 --reason "…"`    gives a lost cluster up for good (or a drained, empty one): its
//                                                   stranded room given up, its deleting admissions released,
//                                                   its running ones moved (docs/multi-cluster.md T10)
// `npm run cluster -- capacity eu-1 cpu=96 nvidia.com/gpu=12 [--reason "…"]`  a new capacity for the resources given
//     (a cut needs the pool and the shards' free slack to cover it), then a rebalance
// `npm run cluster -- rebalance eu-1 [--reason "…"]` each shard's allotment back to its share of the capacity
// `npm run cluster -- adopt default [--reason "…"]`  admissions charged before any cluster was registered (on the
//     unregistered cluster `default`) take their room on it once `default` is added (operator/cluster-adopt.ts)
// `npm run cluster -- list`                          every cluster: state, epoch, capacity, pool
// `npm run cluster -- show eu-1`                     the cluster, each shard's allotment and its last audit rows
// `npm run cluster -- resume`                        rolls forward capacity moves a crash left half done
// The actor in the audit rows is $MODELDOCK_OPERATOR, else $USER. Exit codes: 2 usage, 3 refused
// (nothing written), 1 anything else.
import { RESOURCE_NAMES, RESOURCE_UNITS, type Amounts } from '../schema/model-service.ts';
import { createDb, type Db } from '../ledger/db.ts';
import { amountsOf } from '../ledger/resources.ts';
import { ledgerAnchors } from '../ledger/anchors.ts';
import { resumeMoves } from '../ledger/allotment-moves.ts';
import { listClusters, readAllAllotments, readAudit, readCluster } from '../ledger/cluster-store.ts';
import { CLUSTER_NAME, notAClusterName } from '../ledger/clusters.ts';
import { databaseUrlFromEnv } from './database-url.ts';
import { addCluster, changeClusterState, ClusterRefused, rebalanceCluster, setClusterCapacity, DEFAULT_LEASE_MS, type AdminContext } from './operator/cluster-admin.ts';
import { forgetCluster } from './operator/cluster-forget.ts';
import { adoptAdmissions } from './operator/cluster-adopt.ts';
import { parseLimits, UsageError } from './tenant.ts';

const USAGE =
  'usage: npm run cluster -- add <name> cpu=64 memory=256Gi [nvidia.com/gpu=8] [modelservices=200] [--lease 15s] [--reason "…"] | drain <name> [--reason "…"] | ready <name> [--reason "…"] | forget <name> --reason "…" | capacity <name> cpu=96 … [--reason "…"] | rebalance <name> [--reason "…"] | adopt <name> [--reason "…"] | list | show <name> | resume';

export type ClusterCommand =
  | { kind: 'add'; name: string; capacity: Amounts; leaseMs: number; reason?: string }
  | { kind: 'drain' | 'ready' | 'rebalance' | 'adopt'; name: string; reason?: string }
  | { kind: 'forget'; name: string; reason: string }
  | { kind: 'capacity'; name: string; capacity: Partial<Amounts>; reason?: string }
  | { kind: 'show'; name: string }
  | { kind: 'list' }
  | { kind: 'resume' };

/** `15s`, `1m`, `1500ms` (a bare number is seconds). */
export function parseLease(v: string): number {
  const m = /^(\d{1,7})(ms|s|m)?$/.exec(v);
  if (!m) throw new UsageError(`--lease "${v}" is not a duration (e.g. 15s, 1m, 1500ms)`);
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  if (ms < 1000 || ms > 3_600_000) throw new UsageError(`--lease must be from 1s to 60m (got ${v})`);
  return ms;
}

export function parseClusterArgs(argv: readonly string[]): ClusterCommand {
  const [command, ...args] = argv;
  const positional: string[] = [];
  let reason: string | undefined;
  let lease: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--reason' || a === '--lease') {
      const v = args[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value\n${USAGE}`);
      if (a === '--reason') reason = v;
      else lease = v;
    } else if (a.startsWith('--reason=')) reason = a.slice('--reason='.length);
    else if (a.startsWith('--lease=')) lease = a.slice('--lease='.length);
    else if (a.startsWith('--')) throw new UsageError(`unknown option "${a}"\n${USAGE}`);
    else positional.push(a);
  }
  if (reason !== undefined && (reason.trim() === '' || reason.length > 1000)) throw new UsageError('--reason must be 1 to 1000 characters');
  const trimmed = reason?.trim();
  const withReason = trimmed === undefined ? {} : { reason: trimmed };
  const checkedName = (name: string): string => {
    if (!CLUSTER_NAME.test(name)) throw new UsageError(notAClusterName(name));
    return name;
  };
  const nameOnly = (kind: string): string => {
    const [name, ...rest] = positional;
    if (!name || rest.length > 0) throw new UsageError(`usage: npm run cluster -- ${kind} <name>`);
    return checkedName(name);
  };
  const noOptions = (kind: string) => {
    if (reason !== undefined || lease !== undefined) throw new UsageError(`${kind} takes no --reason or --lease`);
  };
  const nameAndLimits = (): [string, Partial<Amounts>] => {
    const [name, ...limits] = positional;
    if (!name) throw new UsageError(USAGE);
    return [checkedName(name), parseLimits(limits)];
  };
  switch (command) {
    case 'add': {
      const [name, given] = nameAndLimits();
      const capacity = amountsOf((r) => given[r] ?? 0);
      return { kind: 'add', name, capacity, leaseMs: lease === undefined ? DEFAULT_LEASE_MS : parseLease(lease), ...withReason };
    }
    case 'capacity': {
      if (lease !== undefined) throw new UsageError('capacity takes no --lease');
      const [name, capacity] = nameAndLimits();
      return { kind: 'capacity', name, capacity, ...withReason };
    }
    case 'drain':
    case 'ready':
    case 'rebalance':
    case 'adopt':
      if (lease !== undefined) throw new UsageError(`${command} takes no --lease`);
      return { kind: command, name: nameOnly(command), ...withReason };
    case 'forget':
      if (lease !== undefined) throw new UsageError('forget takes no --lease');
      if (trimmed === undefined) throw new UsageError('forget needs --reason "…" (it is written to the audit and to what it releases)');
      return { kind: 'forget', name: nameOnly('forget'), reason: trimmed };
    case 'show':
      noOptions('show');
      return { kind: 'show', name: nameOnly('show') };
    case 'list':
    case 'resume':
      noOptions(command);
      if (positional.length > 0) throw new UsageError(`${command} takes no arguments`);
      return { kind: command };
    default:
      throw new UsageError(USAGE);
  }
}

const SUFFIX = { millicores: 'm', MiB: 'Mi', count: '' } as const;
/** Amounts as the quantities `add` takes (cpu=64000m memory=262144Mi …). */
const fmt = (a: Amounts): string => RESOURCE_NAMES.map((r) => `${r}=${a[r]}${SUFFIX[RESOURCE_UNITS[r].unit]}`).join(' ');

async function show(db: Db, name: string): Promise<void> {
  const c = await readCluster(db, name);
  if (!c) throw new ClusterRefused(`no cluster named ${name}`);
  console.log(`${c.name}\tstate=${c.state}\tepoch=${c.epoch}\tversion=${c.version}\tlease=${c.leaseMs}ms\theartbeat=${c.heartbeatAt ? `${c.heartbeatAt} by ${c.heartbeatBy ?? '?'}` : 'never'}`);
  console.log(`  capacity  ${fmt(c.capacity)}`);
  console.log(`  pool      ${fmt(c.pool)}`);
  for (const a of await readAllAllotments(db, await ledgerAnchors(db), name)) {
    console.log(`  anchor ${a.anchor}\tmode=${a.mode}\tallotted ${fmt(a.allotted)}\treserved ${fmt(a.reserved)}\tstranded ${fmt(a.stranded)}`);
  }
  for (const e of await readAudit(db, name)) console.log(`  #${e.seq}\t${e.at ?? ''}\t${e.action}\tby ${e.actor}\tepoch=${e.epoch}${e.reason ? `\t"${e.reason}"` : ''}`);
}

export async function runCluster(cmd: ClusterCommand, ctx: AdminContext): Promise<void> {
  const { db } = ctx;
  switch (cmd.kind) {
    case 'add': {
      const r = await addCluster(ctx, { name: cmd.name, capacity: cmd.capacity, leaseMs: cmd.leaseMs, ...(cmd.reason ? { reason: cmd.reason } : {}) });
      console.log(`${r.created ? 'added' : 'completed the add of'} ${cmd.name} (joining until its controller takes it over), spread over ${r.anchors.length} shard(s)`);
      return show(db, cmd.name);
    }
    case 'drain':
    case 'ready': {
      const r = await changeClusterState(ctx, { name: cmd.name, action: cmd.kind, ...(cmd.reason ? { reason: cmd.reason } : {}) });
      console.log(r.changed ? `${cmd.name}: ${r.from} → ${r.cluster.state} (epoch ${r.cluster.epoch})` : `${cmd.name}: already ${r.cluster.state}`);
      return;
    }
    case 'forget': {
      const r = await forgetCluster(ctx, { name: cmd.name, reason: cmd.reason });
      console.log(
        `${cmd.name}: ${r.changed ? `${r.from} → forgotten (epoch ${r.cluster.epoch})` : 'already forgotten'}; ${r.strandedForgotten} stranded placement(s) given up, ${r.released} admission(s) released; running ones move to other clusters`,
      );
      return;
    }
    case 'capacity': {
      const r = await setClusterCapacity(ctx, { name: cmd.name, capacity: cmd.capacity, ...(cmd.reason ? { reason: cmd.reason } : {}) });
      console.log(r.changed ? `${cmd.name}: capacity ${fmt(r.cluster.capacity)}` : `${cmd.name}: the capacity is already that`);
      return show(db, cmd.name);
    }
    case 'rebalance': {
      const r = await rebalanceCluster(ctx, { name: cmd.name, ...(cmd.reason ? { reason: cmd.reason } : {}) });
      console.log(`${cmd.name}: back to the pool ${fmt(r.reclaimed)}; from the pool ${fmt(r.granted)}`);
      return show(db, cmd.name);
    }
    case 'adopt': {
      const r = await adoptAdmissions(ctx, { name: cmd.name, ...(cmd.reason ? { reason: cmd.reason } : {}) });
      const n = r.anchors.reduce((s, a) => s + a.admissions, 0);
      console.log(n === 0 ? `${cmd.name}: no admission without a room` : `${cmd.name}: ${n} admission(s) adopted (${r.anchors.map((a) => `${a.anchor}: ${a.admissions}, ${fmt(a.amounts)}`).join('; ')})`);
      return show(db, cmd.name);
    }
    case 'show':
      return show(db, cmd.name);
    case 'list': {
      const all = await listClusters(db);
      if (all.length === 0) console.log('no cluster (npm run cluster -- add <name> …)');
      for (const c of all) console.log(`${c.name}\t${c.state}\tepoch=${c.epoch}\tcapacity ${fmt(c.capacity)}\tpool ${fmt(c.pool)}`);
      return;
    }
    case 'resume':
      console.log(`capacity moves rolled forward: ${await resumeMoves(db, { olderThanMs: 0, now: ctx.now })}`);
  }
}

if (import.meta.main) {
  Promise.resolve()
    .then(() => {
      const cmd = parseClusterArgs(process.argv.slice(2));
      const actor = process.env.MODELDOCK_OPERATOR || process.env.USER || 'operator';
      return runCluster(cmd, { db: createDb({ url: databaseUrlFromEnv() }), actor, now: () => new Date() });
    })
    .catch((err: unknown) => {
      const known = err instanceof UsageError || err instanceof ClusterRefused;
      console.error(known ? `${err instanceof ClusterRefused ? 'refused: ' : ''}${err.message}` : err);
      process.exitCode = err instanceof UsageError ? 2 : err instanceof ClusterRefused ? 3 : 1;
    });
}
