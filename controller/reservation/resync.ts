// The periodic ledger resync (LEDGER_RESYNC_MS): re-enqueues every open reservation, so one whose
// events were missed is still looked at. Bounded: it pages through the open reservations shard by
// shard (`pageSize` rows per statement, stalest `last_reconciled_at` first within a shard, each
// row at most once per tick), and what the reconciles then read is bounded too — delivered/ready reservations are
// decided on the informer cache, and the ledger's live reads go through a rate limiter
// (LEDGER_READ_QPS / LEDGER_READ_BURST, controller/main.ts). Then the admissions a failover moved
// off this cluster that still hold a stranded room here, page by page: their leftovers are deleted
// and the room freed (leftover.ts).
import type { LedgerShard } from '../../ledger/shards.ts';
import type { ReservationKey } from './key.ts';
import { openReservationsPage, strandedPage, type ResyncCursor } from './record.ts';

export interface ResyncOptions {
  shards: () => Promise<LedgerShard[]>;
  /** The controller's cluster: only its open reservations are re-enqueued. */
  cluster: string;
  enqueue: (key: ReservationKey) => void;
  pageSize: number;
  now: () => Date;
  onPage?: () => void;
}

/** One resync: every open reservation of the cluster not reconciled since the tick started, shard by shard, page by page. */
export async function resyncOnce(o: ResyncOptions, signal: AbortSignal): Promise<{ pages: number; enqueued: number }> {
  const before = o.now();
  let pages = 0;
  let enqueued = 0;
  for (const shard of await o.shards()) {
    const db = shard.db.withSignal(signal);
    let after: ResyncCursor | null = null;
    do {
      signal.throwIfAborted();
      const page = await openReservationsPage(db, { cluster: o.cluster, before, after, limit: o.pageSize });
      pages++;
      o.onPage?.();
      for (const key of page.keys) o.enqueue(key);
      enqueued += page.keys.length;
      after = page.next;
    } while (after);
    let from: ReservationKey | null = null;
    do {
      signal.throwIfAborted();
      const keys = await strandedPage(db, { cluster: o.cluster, after: from, limit: o.pageSize });
      pages++;
      o.onPage?.();
      for (const key of keys) o.enqueue(key);
      enqueued += keys.length;
      from = keys.length === o.pageSize ? keys.at(-1)! : null;
    } while (from);
  }
  return { pages, enqueued };
}
