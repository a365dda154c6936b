// An operator resolves a conflict (`npm run tenant -- resolve <admission-id> --release|--keep
// --reason "…"`): a conflict is never released automatically, so a person decides. The decision
// is refused while the live cluster still has the CR with the bound UID or any pod carrying the
// admission id — release only what is really gone. The rule is `refusal()` (pure); the write is
// `resolveConflict()` in resolve-conflict.ts (one conditional transaction with its audit movement).
import type { Db } from '../../ledger/db.ts';
import { crNameFor } from '../../schema/admission.ts';
import { LABELS, type ModelService } from '../../schema/model-service.ts';
import { clusterPaths, paths, type KubeClient } from '../../controller/runtime/kube.ts';
import { loadReservationRecord, tenantOf, type ReservationRecord } from '../../controller/reservation/record.ts';
import { resolveConflict, type Resolution } from './resolve-conflict.ts';

/** The decision was refused; nothing was written. */
export class ResolveRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResolveRefused';
  }
}

export interface LiveAdmission {
  /** The CR under the bound (or deterministic) name, if any: its namespace/name and UID. */
  cr: { ref: string; uid: string } | null;
  /** Pods anywhere in the cluster labelled with the admission id. */
  pods: string[];
}

/** Why the decision must be refused, or undefined when it may be written. */
export function refusal(rec: ReservationRecord | undefined, live: LiveAdmission): string | undefined {
  if (!rec) return 'no such admission';
  if (rec.state !== 'conflict') return `admission ${rec.id} is ${rec.state}, not in conflict: only a conflict is resolved by an operator`;
  const bound = rec.binding?.uid ?? null;
  if (live.cr && bound !== null && live.cr.uid === bound) {
    return `the ModelService ${live.cr.ref} with the bound UID ${bound} still exists: delete it (and let its pods go) first`;
  }
  if (live.pods.length > 0) return `${live.pods.length} pod(s) of the admission still exist: ${live.pods.sort().join(', ')}`.slice(0, 1000);
  return undefined;
}

export interface ResolveDeps {
  db: Db;
  /** An operator's client (admin kubeconfig): it reads pods in every namespace. */
  kube: KubeClient;
  now: () => Date;
}

/** The bound CR, or for an undelivered admission one carrying its id under its deterministic name in any namespace (a delivery that crashed before binding). */
async function readCr(kube: KubeClient, rec: ReservationRecord): Promise<ModelService | undefined> {
  if (rec.binding) return kube.getOrUndefined<ModelService>(paths.modelService(rec.binding.namespace, rec.binding.crName));
  const found = await kube.list<ModelService>(clusterPaths.modelServices, { labelSelector: `${LABELS.admissionId}=${rec.id}` });
  return found.items.find((m) => m.metadata.name === crNameFor(rec.id));
}

async function readLive(kube: KubeClient, rec: ReservationRecord): Promise<LiveAdmission> {
  const ms = await readCr(kube, rec);
  const pods = await kube.list<{ metadata: { namespace?: string; name: string } }>(clusterPaths.pods, { labelSelector: `${LABELS.admissionId}=${rec.id}` });
  return {
    cr: ms ? { ref: `${ms.metadata.namespace ?? ''}/${ms.metadata.name}`, uid: ms.metadata.uid ?? '' } : null,
    pods: pods.items.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`),
  };
}

/** Checks the live cluster, then writes the decision; throws ResolveRefused when it may not. */
export async function resolveAdmission(deps: ResolveDeps, id: string, decision: Resolution, reason: string): Promise<ReservationRecord> {
  // The operator names the admission only: its tenant (its shard) is looked up shard by shard.
  const tenant = await tenantOf(deps.db, id);
  const rec = tenant === undefined ? undefined : await loadReservationRecord(deps.db, { tenant, id });
  const why = refusal(rec, rec ? await readLive(deps.kube, rec) : { cr: null, pods: [] });
  if (why || !rec) throw new ResolveRefused(why ?? 'no such admission');
  const outcome = await resolveConflict(deps.db, rec, decision, reason, deps.now());
  if (outcome === 'not-in-conflict') throw new ResolveRefused(`admission ${id} left conflict meanwhile; nothing written`);
  if (outcome === 'already-resolved') throw new ResolveRefused(`admission ${id} was already resolved with --${decision}; nothing written`);
  const after = await loadReservationRecord(deps.db, rec);
  if (!after) throw new ResolveRefused('no such admission');
  return after;
}
