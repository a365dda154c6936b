// The two seams of a ledger reconcile, scripted: a Db answering the reconciler's statements from
// reservation rows the test gives (reservation-fixtures.ts), and a ReservationCluster
// (controller/reservation/cluster.ts) answering from a script and recording every call.
import type { Db, ExecResult, Queryable, Row, SqlArg } from '../../ledger/db.ts';
import type { ModelService } from '../../schema/model-service.ts';
import { observe, type DeleteOutcome, type ReservationCluster, type ScaleOutcome } from '../../controller/reservation/cluster.ts';
import type { ObservedPod } from '../../controller/reservation/decide.ts';
import type { ObservedDeployment } from '../../controller/reservation/scale.ts';

export interface LedgerScript {
  /** What successive reads of the reservation return; the last one repeats. Empty: no such reservation. */
  records: Row[];
  /** rowsAffected of a write (default 1); throw to make the statement fail. */
  affected?: (sql: string, args: readonly SqlArg[]) => number;
  /** Whether a claimed row's claim still holds under the fence (holdsClaim; default true). */
  claimHeld?: boolean;
}

/** Each transaction's end, in order. */
export type TxEnd = 'commit' | 'rollback';

/** A Db that answers the reconciler's statements from `script`; an unscripted read fails the test. */
export function scriptedLedgerDb(script: LedgerScript): { db: Db; ends: TxEnd[] } {
  let reads = 0;
  const ends: TxEnd[] = [];
  const current = (): Row | undefined => script.records[Math.min(reads, script.records.length - 1)];
  const execute = async (sql: string, args: readonly SqlArg[] = []): Promise<ExecResult> => {
    const s = sql.trim();
    if (/^SELECT r\.id, r\.tenant/.test(s)) {
      const row = current();
      reads++;
      return { rows: row ? [row] : [], rowsAffected: 0 };
    }
    if (/^SELECT generation, /.test(s)) {
      const row = script.records[Math.max(0, Math.min(reads, script.records.length) - 1)];
      return { rows: row ? [row] : [], rowsAffected: 0 };
    }
    if (/^SELECT MAX\(queued\) AS queued FROM tenant_quota/.test(s)) return { rows: [{ queued: 0 }], rowsAffected: 0 }; // nothing queued
    if (/^SELECT name FROM cluster LIMIT 1/.test(s)) return { rows: [], rowsAffected: 0 }; // no cluster registered: the tenant's own dequeue
    if (/^SELECT 1 AS held FROM outbox o/.test(s)) return { rows: script.claimHeld === false ? [] : [{ held: 1 }], rowsAffected: 0 };
    if (/^(UPDATE|INSERT|DELETE)\b/.test(s)) return { rows: [], rowsAffected: script.affected?.(s, args) ?? 1 };
    throw new Error(`unscripted statement: ${s.slice(0, 120)}`);
  };
  const db: Db = {
    execute,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      try {
        const result = await fn({ execute });
        ends.push('commit');
        return result;
      } catch (err) {
        ends.push('rollback');
        throw err;
      }
    },
    withSignal: () => db,
    onShard: () => db,
  };
  return { db, ends };
}

export interface ClusterScript {
  /** The CR under the reservation's name (live reads); null: none. */
  modelService?: ModelService | null;
  pods?: ObservedPod[];
  deployment?: ObservedDeployment | null;
  /** What a create finds: a new CR (default), the CR already there (AlreadyExists), or an error. */
  create?: { created: boolean; object: ModelService } | Error;
  delete?: DeleteOutcome;
  scale?: ScaleOutcome;
  /** What preparing the tenant's namespace throws (default: it succeeds). */
  ensureTenantSpace?: Error;
}

export interface ClusterCall {
  op: keyof ReservationCluster;
  args: unknown[];
}

/** A ReservationCluster answering from `script`, recording every call. */
export function fakeLedgerCluster(script: ClusterScript): { cluster: ReservationCluster; calls: ClusterCall[] } {
  const calls: ClusterCall[] = [];
  const call = (op: keyof ReservationCluster, ...args: unknown[]) => calls.push({ op, args });
  const cluster: ReservationCluster = {
    async readModelService(ns, name) {
      call('readModelService', ns, name);
      const ms = script.modelService ?? null;
      return ms ? { ...observe(ms), object: ms } : null;
    },
    async listPods(ns, admissionId) {
      call('listPods', ns, admissionId);
      return script.pods ?? [];
    },
    async readDeployment(ns, name) {
      call('readDeployment', ns, name);
      return script.deployment ?? null;
    },
    async ensureTenantSpace(tenant) {
      call('ensureTenantSpace', tenant);
      if (script.ensureTenantSpace instanceof Error) throw script.ensureTenantSpace;
    },
    async createModelService(obj) {
      call('createModelService', obj);
      if (script.create instanceof Error) throw script.create;
      return script.create ?? { created: true, object: { ...obj, metadata: { ...obj.metadata, uid: 'uid-new', resourceVersion: '1' } } };
    },
    async deleteModelService(ns, name, pre) {
      call('deleteModelService', ns, name, pre);
      return script.delete ?? 'deleted';
    },
    async scaleModelService(ns, name, replicas, resourceVersion) {
      call('scaleModelService', ns, name, replicas, resourceVersion);
      return script.scale ?? 'scaled';
    },
    async setCondition(ns, name, condition) {
      call('setCondition', ns, name, condition);
    },
  };
  return { cluster, calls };
}
