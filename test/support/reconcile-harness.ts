// A reservation reconcile without a stack: the scripted ledger database and cluster
// (reconcile-fakes.ts), every statement recorded by recording-db.ts, and the rest of ReservationDeps
// (fence, clock, claims, metrics, events, log) in memory. Unit tests of the ledger reconciler and
// of its step build on it.
import type { SqlArg } from '../../ledger/db.ts';
import type { ModelService } from '../../schema/model-service.ts';
import { ANY_REGISTRY } from '../../schema/policy.ts';
import { ledgerMetrics, type LedgerMetrics } from '../../controller/reservation/metrics.ts';
import { DEFAULT_OUTBOX_BACKOFF, type ClaimedRow } from '../../controller/reservation/outbox-store.ts';
import type { ReservationDeps, ReconcileScope } from '../../controller/reservation/reconcile-deps.ts';
import { loadReservationRecord, type ReservationRecord } from '../../controller/reservation/record.ts';
import { step } from '../../controller/reservation/step.ts';
import { createLogger } from '../../controller/runtime/log.ts';
import { Metrics } from '../../controller/runtime/metrics.ts';
import { StatementLog, type RecordedStatement } from './recording-db.ts';
import { fakeLedgerCluster, scriptedLedgerDb, type ClusterCall, type ClusterScript, type LedgerScript, type TxEnd } from './reconcile-fakes.ts';
import { EPOCH, KEY, NAMESPACE, NOW, reservationRow, type ReservationFixture } from './reservation-fixtures.ts';
import { createPlacer } from '../../ledger/placement.ts';

/** The reservation as the reconciler reads it (through record.ts, from reservationRow). */
export async function ledgerRecord(f: ReservationFixture): Promise<ReservationRecord> {
  const rec = await loadReservationRecord(scriptedLedgerDb({ records: [reservationRow(f)] }).db, { tenant: f.tenant ?? KEY.tenant, id: f.id ?? KEY.id });
  if (!rec) throw new Error('no record');
  return rec;
}

export interface HarnessOptions extends LedgerScript, ClusterScript {
  /** Rows the poller claimed, handed over once by takeClaims. */
  claims?: ClaimedRow[];
  /** The informer cache's CR under the name: undefined while not synced (the default). */
  cached?: ModelService | null;
  /** The record the poller read with the claim (handed over once). */
  prefetched?: ReservationRecord;
  /** The controller's image policy (default `*`: any registry). */
  allowedRegistries?: ReservationDeps['config']['allowedRegistries'];
  /** The API server's time (default: none given, the controller's NOW is used). */
  apiServerNow?: Date;
}

export interface Harness {
  deps: ReservationDeps;
  /** The deps of one reconcile (what step() is given). */
  scope: ReconcileScope;
  /** Every statement the code issued, in order. */
  statements: RecordedStatement[];
  /** The writes only, whitespace collapsed. */
  writes(): Array<{ sql: string; args: readonly SqlArg[]; tx: number | null }>;
  ends: TxEnd[];
  calls: ClusterCall[];
  /** Rows handed back to the poller unfailed. */
  kept: ClaimedRow[];
  /** The ModelServices the delivery said it created (deps.created). */
  created: ModelService[];
  /** The tenants of each fence.forTenants call. */
  fenced: string[][];
  events: Array<{ reason: string; type: string; note: string; name: string }>;
  logs: Array<Record<string, unknown>>;
  metrics: LedgerMetrics;
  /** A counter's value (labels optional). */
  count(metric: keyof LedgerMetrics, labels?: Record<string, string>): Promise<number>;
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim();

export function reconcileHarness(o: HarnessOptions): Harness {
  const log = new StatementLog();
  const { db: inner, ends } = scriptedLedgerDb(o);
  const db = log.wrap(inner);
  const { cluster, calls } = fakeLedgerCluster(o);
  let claims = [...(o.claims ?? [])];
  const kept: ClaimedRow[] = [];
  const created: ModelService[] = [];
  const fenced: string[][] = [];
  const events: Harness['events'] = [];
  const logs: Harness['logs'] = [];
  const metrics = ledgerMetrics(new Metrics().registry);
  let prefetch = o.prefetched;
  const deps: ReservationDeps = {
    db,
    placer: createPlacer(),
    cluster: () => cluster,
    cachedModelService: () => o.cached,
    namespaceFor: () => NAMESPACE,
    fence: {
      cluster: 'default',
      epoch: async () => EPOCH,
      forTenants: async (tenants) => {
        fenced.push([...tenants]);
        return EPOCH;
      },
    },
    now: () => NOW,
    apiServerNow: o.apiServerNow && (() => o.apiServerNow!),
    config: { readyDeadlineMs: 600_000, releaseBlockedAfterMs: 60_000, outboxBackoff: DEFAULT_OUTBOX_BACKOFF, allowedRegistries: o.allowedRegistries ?? ANY_REGISTRY },
    takeClaims: (id) => {
      const mine = claims.filter((c) => c.reservationId === id);
      claims = claims.filter((c) => c.reservationId !== id);
      return mine;
    },
    keepClaims: (rows) => kept.push(...rows),
    prefetched: () => {
      const p = prefetch;
      prefetch = undefined;
      return p;
    },
    created: (obj) => created.push(obj),
    metrics,
    events: { record: (obj, type, reason, note) => events.push({ type, reason, note, name: obj.metadata.name }) },
    log: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
  };
  return {
    deps,
    scope: { ...deps, cluster },
    statements: log.statements,
    writes: () => log.statements.filter((s) => /^\s*(UPDATE|INSERT|DELETE)\b/.test(s.sql)).map((s) => ({ sql: oneLine(s.sql), args: s.args, tx: s.tx })),
    ends,
    calls,
    kept,
    created,
    fenced,
    events,
    logs,
    metrics,
    async count(metric, labels) {
      const values = (await metrics[metric].get()).values;
      const matches = (l: Record<string, unknown>) => Object.entries(labels ?? {}).every(([k, val]) => l[k] === val);
      return values.filter((v) => matches(v.labels)).reduce((n, v) => n + v.value, 0);
    },
  };
}

/** One step (controller/reservation/step.ts) of the reservation `f` against the cluster and ledger of `o`. */
export async function stepOf(f: ReservationFixture, o: Omit<HarnessOptions, 'records'> = {}): Promise<{ h: Harness; result: unknown; ops: string[] }> {
  const h = reconcileHarness({ ...o, records: [reservationRow(f)] });
  const result = await step(h.scope, await ledgerRecord(f), EPOCH, h.deps.log);
  return { h, result, ops: h.calls.map((c) => c.op) };
}
