// Many reservations at once, written straight into a ledger (one INSERT … SELECT per table, not
// one admission each), and what a read costs MariaDB. For the suites and benchmarks about reads at
// scale (test/integration/ledger-read-cost.test.ts, bench/b9.ts). The rows are the shape the Worker
// and the controller leave: the reservation, its binding (a delivered one), its create outbox row
// (done) and, once released, its done delete row. A single MariaDB ledger: `db` runs every
// statement where it is.
import type { Db, Queryable } from '../../ledger/db.ts';

const SPEC = JSON.stringify({ image: 'ghcr.io/acme/model:1', replicas: 1, port: 8000, resources: { cpu: '100m', memory: '128Mi' } });

/** 1 … 100,000 from five tables of digits (no recursive CTE: the server may cap its iterations). */
const DIGITS = 'SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9';
const MAX_BULK = 100_000;
const SEQUENCE = `SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
  FROM (${DIGITS}) a CROSS JOIN (${DIGITS}) b CROSS JOIN (${DIGITS}) c CROSS JOIN (${DIGITS}) e CROSS JOIN (${DIGITS}) f`;

/** A reservation id of `prefix` + n, zero-padded to 26 characters: ascending with n (older first). */
export const bulkId = (prefix: string, n: number): string => `${prefix}${String(n).padStart(26 - prefix.length, '0')}`;

/**
 * `n` reservations of `tenant` in `state` with ids bulkId(prefix, 1…n), each 100m / 128 MiB / 1
 * modelservices. `prefix` must be a valid start of an admission id (ULID alphabet) and unique in the ledger.
 */
export async function bulkReservations(db: Db, o: { tenant: string; prefix: string; n: number; state: 'ready' | 'released' }): Promise<void> {
  const mine = 'tenant = ? AND id LIKE ?';
  const args = [o.tenant, `${o.prefix}%`];
  if (o.n > MAX_BULK) throw new Error(`bulkReservations: at most ${MAX_BULK} at once`);
  await db.execute(
    `INSERT INTO reservation (id, tenant, idempotency_key, request_hash, name, spec, cpu_millis, memory_mib, gpu, modelservices, state, request_id, created_at, updated_at, state_changed_at)
     SELECT CONCAT(?, LPAD(seq.n, ?, '0')), ?, CONCAT(?, seq.n), REPEAT('0', 64), 'm', ?, 100, 128, 0, 1, ?, 'bulk', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
     FROM (${SEQUENCE}) seq WHERE seq.n <= ?`,
    [o.prefix, 26 - o.prefix.length, o.tenant, o.prefix, SPEC, o.state, o.n],
  );
  await db.execute(
    `INSERT INTO binding (tenant, reservation_id, namespace, cr_name, uid, ever_ready, first_ready_at, created_at, updated_at)
     SELECT tenant, id, 'bulk', CONCAT('md-', LOWER(id)), UUID(), 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) FROM reservation WHERE ${mine}`,
    args,
  );
  const kinds = o.state === 'released' ? ['create', 'delete'] : ['create'];
  for (const kind of kinds) {
    await db.execute(
      `INSERT INTO outbox (tenant, reservation_id, kind, available_at, done_at, dedupe_key, created_at)
       SELECT tenant, id, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), CONCAT(?, ':', id), UTC_TIMESTAMP(3) FROM reservation WHERE ${mine}`,
      [kind, kind, ...args],
    );
  }
}

/**
 * Index lookups and rows MariaDB read (the session's Handler_read_* counters, which SHOW STATUS
 * itself does not move) to run `read` on one session: a cost that depends on the plan and the
 * rows, not on the machine's load.
 */
export async function rowsRead(db: Db, read: (q: Queryable) => Promise<unknown>): Promise<number> {
  const counters = async (q: Queryable) => (await q.execute("SHOW SESSION STATUS LIKE 'Handler_read%'")).rows.reduce((n, row) => n + Number(row.Value), 0);
  return db.transaction(async (tx) => {
    const before = await counters(tx);
    await read(tx);
    return (await counters(tx)) - before;
  });
}
