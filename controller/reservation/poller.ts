// The outbox poller (leader only): claims due rows in bounded batches with a conditional-UPDATE
// lease, shard by shard (a bounded page per shard and round; one shard on a single MySQL), hands
// them to the ledger controller's queue keyed by (tenant, reservation id) (so everything about
// one admission is serialized), and polls with a short interval that backs off when idle.
import type { Queryable } from '../../ledger/db.ts';
import type { LedgerShard } from '../../ledger/shards.ts';
import { childAbort } from '../runtime/abort.ts';
import { crashPoint } from '../runtime/crash.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/log.ts';
import type { LeaderFence } from './leader-fence.ts';
import { claimDue, type ClaimedRow } from './outbox-store.ts';

export interface PollerOptions {
  /** The ledger's shards (re-read now and then: a reshard changes them). */
  shards: () => Promise<LedgerShard[]>;
  holder: string;
  fence: LeaderFence;
  enqueue: (row: ClaimedRow) => void;
  /**
   * Runs after a shard's claim, before its rows are enqueued, on the shard they were claimed from
   * (prefetch.ts reads the deliveries' records). A failure only costs the prefetch.
   */
  prefetch?: (shard: Queryable, rows: readonly ClaimedRow[]) => Promise<void>;
  log: Logger;
  now?: () => Date;
  leaseMs?: number;
  batch?: number;
  minIntervalMs?: number;
  maxIntervalMs?: number;
}

export class OutboxPoller {
  readonly #o: PollerOptions;
  /** Claimed rows waiting for their reservation's reconcile, by reservation id, then seq. */
  readonly #claims = new Map<string, Map<number, ClaimedRow>>();
  #stopped = true;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(o: PollerOptions) {
    this.#o = o;
  }

  /** The claimed rows of one reservation, oldest first; they are handed over exactly once. */
  take(reservationId: string): ClaimedRow[] {
    const rows = this.#claims.get(reservationId);
    this.#claims.delete(reservationId);
    return rows ? [...rows.values()].sort((a, b) => a.seq - b.seq) : [];
  }

  /**
   * Takes back rows whose failure could not be recorded (the database is down): the next
   * reconcile of their reservation gets them again while their claim lasts. A row claimed anew
   * meanwhile (its lease ran out) keeps the newer claim.
   */
  restore(rows: readonly ClaimedRow[], now: Date = new Date()): void {
    for (const row of rows) {
      if (row.claim.until.getTime() <= now.getTime()) continue; // expired: the poller claims it again
      const mine = this.#claims.get(row.reservationId) ?? new Map<number, ClaimedRow>();
      if (!mine.has(row.seq)) mine.set(row.seq, row);
      this.#claims.set(row.reservationId, mine);
    }
  }

  get started(): boolean {
    return !this.#stopped;
  }

  start(signal?: AbortSignal): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#abort = childAbort(signal);
    this.#loop = this.#run();
  }

  /** Stops polling; a claim round in flight is aborted (rows it claimed are re-claimed after their lease). */
  /** Polls now instead of at the end of the current wait (rows were just routed to this cluster). */
  wake(): void {
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort(new Error('outbox poller stopping'));
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { minIntervalMs = 200, maxIntervalMs = 2000 } = this.#o;
    let interval = minIntervalMs;
    while (!this.#stopped) {
      try {
        const got = await this.#pollOnce();
        interval = got > 0 ? minIntervalMs : Math.min(maxIntervalMs, interval * 2);
      } catch (err) {
        interval = maxIntervalMs;
        if (!this.#stopped) this.#o.log.warn('outbox poll failed', { err: errorMessage(err) });
      }
      if (this.#stopped) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, interval);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** One claim round over every shard (`batch` rows at most per shard); returns how many rows were claimed. */
  async #pollOnce(): Promise<number> {
    const epoch = await this.#o.fence.epoch();
    let claimed = 0;
    for (const shard of await this.#o.shards()) {
      const db = shard.db.withSignal(this.#abort.signal);
      const rows = await claimDue(db, {
        holder: this.#o.holder,
        cluster: this.#o.fence.cluster,
        epoch,
        leaseMs: this.#o.leaseMs ?? 60_000,
        limit: this.#o.batch ?? 50,
        now: (this.#o.now ?? (() => new Date()))(),
        shard: shard.name,
        beforeClaim: async (tenants) => void (await this.#o.fence.forTenants(tenants)),
      });
      if (rows.length > 0) {
        crashPoint('after-claim');
        await this.#o.prefetch?.(db, rows).catch((err: unknown) => this.#o.log.warn('outbox prefetch failed', { err: errorMessage(err) }));
      }
      for (const row of rows) {
        const mine = this.#claims.get(row.reservationId) ?? new Map<number, ClaimedRow>();
        mine.set(row.seq, row); // a re-claim after an expired lease replaces the stale claim
        this.#claims.set(row.reservationId, mine);
        this.#o.enqueue(row);
      }
      claimed += rows.length;
    }
    return claimed;
  }
}
