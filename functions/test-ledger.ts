// Unit-test support (imported by functions/ tests only): a Db over a few in-memory
// reservations that answers exactly the reads the inference routes and GET /requests make —
// the state of one admission, the ready ones of a tenant, one admission with its binding, a page —
// and fails the test on any other statement. Each answer names the tenant, as the SQL does.
import type { ReservationState } from '../schema/admission.ts';
import type { Db, ExecResult, Row, SqlArg } from '../ledger/db.ts';
import { AMOUNT_COLUMNS, RESOURCE_NAMES } from '../ledger/resources.ts';

export interface FakeReservation {
  id: string;
  tenant: string;
  name: string;
  state: ReservationState;
  /** The CR's namespace once bound (delivered); undefined = no binding. */
  boundIn?: string;
  createdAt?: string;
}

const SPEC = { image: 'ghcr.io/acme/llm:1.0', replicas: 1, port: 8000, resources: { cpu: '500m', memory: '512Mi' }, env: [], args: [], readinessPath: '/healthz' };
const AT = '2026-03-01 12:00:00.000';

/**
 * A row as findById / listByTenant read it (functions/db/reservations.ts selectAdmission): acme's
 * delivered admission `chat`, not bound, without error or amounts; `over` replaces columns.
 */
export function admissionRow(over: Row = {}): Row {
  const row: Row = {
    id: '01HRESERVATION',
    tenant: 'acme',
    name: 'chat',
    state: 'delivered',
    spec: JSON.stringify(SPEC),
    generation: 1,
    applied_generation: 1,
    settled_generation: 1,
    c_from: null,
    request_id: 'req-1',
    request_hash: 'h',
    created_at: AT,
    updated_at: AT,
    state_changed_at: AT,
    release_blocked_since: null,
    release_blocked_reason: null,
    release_blocked_pods: null,
    release_blocked_finalizers: null,
    last_error: null,
    b_namespace: null,
    b_last_failure: null,
    dead_outbox: 0,
    next_attempt_at: null,
    retry_error: null,
    cluster: 'default',
    room_anchor: null,
    ...over,
  };
  for (const res of RESOURCE_NAMES) row[AMOUNT_COLUMNS[res]] ??= 0;
  return row;
}

/** The row of a fake reservation. */
function rowOf(r: FakeReservation): Row {
  const at = r.createdAt ?? AT;
  return admissionRow({
    id: r.id,
    tenant: r.tenant,
    name: r.name,
    state: r.state,
    created_at: at,
    updated_at: at,
    state_changed_at: at,
    b_namespace: r.boundIn ?? null,
    b_cr_name: `md-${r.id.toLowerCase()}`,
    b_uid: r.boundIn ? 'uid-1' : null,
    b_ever_ready: r.state === 'ready' ? 1 : 0,
    b_first_ready_at: null,
    b_created_at: r.boundIn ? at : null,
    b_scheduled_at: null,
    b_started_at: null,
  });
}

export interface FakeLedger {
  db: Db;
  /** Every statement executed, in order. */
  statements: string[];
  reservations: FakeReservation[];
}

export function fakeLedger(reservations: FakeReservation[]): FakeLedger {
  const statements: string[] = [];
  const mine = (tenant: SqlArg | undefined) => reservations.filter((r) => r.tenant === tenant);
  const answer = (sql: string, args: readonly SqlArg[]): Row[] => {
    const oneLine = sql.replace(/\s+/g, ' ').trim();
    if (oneLine.startsWith('SELECT state FROM reservation WHERE tenant = ? AND id = ?')) {
      return mine(args[0]).filter((r) => r.id === args[1]).map((r) => ({ state: r.state }));
    }
    if (/WHERE state = 'ready' AND tenant = \? ORDER BY id DESC LIMIT \?$/.test(oneLine)) {
      const ready = mine(args[0]).filter((r) => r.state === 'ready').sort((a, b) => (a.id < b.id ? 1 : -1));
      return ready.slice(0, Number(args[1])).map((r) => ({ id: r.id, name: r.name, created_at: r.createdAt ?? AT }));
    }
    if (/ WHERE r\.tenant = \? AND r\.id = \?$/.test(oneLine)) return mine(args[0]).filter((r) => r.id === args[1]).map(rowOf);
    if (/ WHERE r\.tenant = \? ORDER BY r\.id DESC LIMIT \?$/.test(oneLine)) {
      return mine(args[0]).sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, Number(args[1])).map(rowOf);
    }
    throw new Error(`unexpected statement: ${oneLine}`);
  };
  const db: Db = {
    execute: async (sql, args = []): Promise<ExecResult> => {
      statements.push(sql);
      return { rows: answer(sql, args), rowsAffected: 0 };
    },
    transaction: () => Promise.reject(new Error('unexpected transaction')),
    withSignal: () => db,
    onShard: () => db,
  };
  return { db, statements, reservations };
}
