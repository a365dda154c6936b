// The outbox contract shared by both sides: rows of these kinds are inserted under these dedupe
// keys (enqueue, below: the Worker's admissions and changes, and the dequeue of a queued admission,
// ledger/queue.ts, on either side); the controller claims and acknowledges them
// (controller/reservation/outbox-store.ts). `dedupe_key` is UNIQUE: an insert whose key exists is a
// no-op, never a duplicate row.
import type { Queryable } from './db.ts';

export type OutboxKind = 'create' | 'delete' | 'reconcile' | 'scale';

export const dedupeKey = {
  /** Placement 1 (the admission, or its dequeue); a failover move's placement n ≥ 2: `create:<id>:<n>`. */
  create: (id: string, placement = 1) => (placement === 1 ? `create:${id}` : `create:${id}:${placement}`),
  delete: (id: string) => `delete:${id}`,
  /** One per change generation of an admission (PATCH /requests/:id). */
  scale: (id: string, generation: number) => `scale:${id}:${generation}`,
  /** Present while a reconcile row is pending; the controller sets dedupe_key NULL when done. */
  reconcilePending: (id: string) => `reconcile:${id}:pending`,
};

export interface OutboxInsert {
  /** The reservation's tenant: the row's shard on a ledger sharded by tenant. */
  tenant: string;
  reservationId: string;
  kind: OutboxKind;
  dedupeKey: string;
  requestId: string | null;
  /** The cluster whose controller claims it: the cluster the admission is placed on (a create row's is its new placement's). */
  cluster: string;
}

/**
 * Inserts rows of ONE tenant (one single-shard statement; vtgate gives each its seq from the
 * global sequence); rows whose dedupe_key exists are skipped. Returns rows inserted.
 */
export async function enqueue(q: Queryable, rows: readonly OutboxInsert[], now: Date): Promise<number> {
  if (rows.length === 0) return 0;
  const tenant = rows[0]!.tenant;
  if (rows.some((r) => r.tenant !== tenant)) throw new Error('enqueue: one tenant per statement (the ledger is sharded by tenant)');
  const values = rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
  const args = rows.flatMap((r) => [r.tenant, r.reservationId, r.kind, now, r.dedupeKey, r.requestId, r.cluster, now]);
  const r = await q.execute(
    `INSERT INTO outbox (tenant, reservation_id, kind, available_at, dedupe_key, request_id, cluster, created_at) VALUES ${values}
     ON DUPLICATE KEY UPDATE seq = seq`,
    args,
  );
  return r.rowsAffected;
}
