// The records of claimed deliveries, read right after the claim in ONE statement per shard and
// claim round (the claim raised their tenants' fences first), so the reconcile of a `create` row
// goes straight to the CR create instead of spending one more database round trip before it.
// A record is handed over once, and only while fresh (`maxAgeMs`): a key that waited longer in the
// work queue, or any other reconcile, reads the ledger as before. A stale view is safe anyway: the
// delivery's transaction is guarded by the claim and the state it leaves (transitions.ts ackCreate),
// as it is when the reservation changes between a read and the create.
import type { Queryable } from '../../ledger/db.ts';
import { reservationKey, type ReservationKey } from './key.ts';
import type { ClaimedRow } from './outbox-store.ts';
import { loadReservationRecords, type ReservationRecord } from './record.ts';

export class RecordPrefetch {
  readonly #records = new Map<string, { record: ReservationRecord; at: number }>();
  readonly #maxAgeMs: number;
  readonly #now: () => number;

  constructor(o: { maxAgeMs?: number; now?: () => number } = {}) {
    this.#maxAgeMs = o.maxAgeMs ?? 5_000;
    this.#now = o.now ?? (() => performance.now());
  }

  /** Reads the records of the `create` rows among `rows` (all claimed on the shard `q` targets). */
  async load(q: Queryable, rows: readonly ClaimedRow[]): Promise<void> {
    const keys = rows.filter((r) => r.kind === 'create').map((r) => ({ tenant: r.tenant, id: r.reservationId }));
    if (keys.length === 0) return;
    const records = await loadReservationRecords(q, keys);
    const at = this.#now();
    for (const [k, e] of this.#records) if (!this.#fresh(e, at)) this.#records.delete(k); // never taken
    for (const record of records) this.#records.set(reservationKey(record), { record, at });
  }

  /** The record read for `key`, once, if still fresh. */
  take(key: ReservationKey): ReservationRecord | undefined {
    const k = reservationKey(key);
    const e = this.#records.get(k);
    this.#records.delete(k);
    return e && this.#fresh(e, this.#now()) ? e.record : undefined;
  }

  #fresh(e: { at: number }, now: number): boolean {
    return now - e.at <= this.#maxAgeMs;
  }

  get size(): number {
    return this.#records.size;
  }
}
