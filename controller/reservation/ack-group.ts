// Group commit of delivery acknowledgements. Deliveries of one claim (rows claimed together: one
// shard, one epoch) that finish while an acknowledgement of that claim is committing wait for it,
// then go together in ONE transaction (transitions.ts ackCreates) instead of one each: a burst's
// deliveries cost the ledger a transaction per group, not per row. The first acknowledgement of a
// claim is committed at once (no timer: nothing waits that need not). A group whose claims no
// longer all hold writes nothing; its deliveries are then acknowledged one by one, so each gets
// its own outcome (done, or ClaimLost). A group that fails as a whole (the database) fails each
// of its deliveries with that error, as their own transactions would have. A group serves several
// reconciles, so its transaction runs on the controller's Db (every round trip with its deadline),
// not under one reconcile's signal; an abandoned reconcile's row is then either done or still
// claimed, and both are safe (its give-back matches no done row; a claim runs out).
import type { DeliveryAck } from './transitions.ts';

export interface AckGroupOptions {
  /** One delivery's transaction (transitions.ts ackCreate); throws ClaimLost when its claim no longer holds. */
  one: (ack: DeliveryAck) => Promise<void>;
  /** A claim's group in one transaction (transitions.ts ackCreates on the claim's shard); false: a claim lost, nothing written. */
  group: (acks: readonly DeliveryAck[]) => Promise<boolean>;
  /** Most acknowledgements per transaction (default 50: the poller's claim batch). */
  maxGroup?: number;
  /** Every committed group of two or more, with its size. */
  onGroup?: (size: number) => void;
}

interface Waiting {
  ack: DeliveryAck;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AckGroups {
  readonly #o: AckGroupOptions;
  /** Acknowledgements waiting, by claim; a claim present here has a commit loop running. */
  readonly #waiting = new Map<string, Waiting[]>();

  constructor(o: AckGroupOptions) {
    this.#o = o;
  }

  /** Resolves once the delivery is acknowledged; rejects as its own transaction would have. */
  ack(ack: DeliveryAck): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const claim = ack.row.claim.by;
      const queue = this.#waiting.get(claim);
      if (queue) {
        queue.push({ ack, resolve, reject });
        return;
      }
      this.#waiting.set(claim, [{ ack, resolve, reject }]);
      void this.#drain(claim);
    });
  }

  /** Claims with a commit loop running (0 when idle). */
  get pending(): number {
    return this.#waiting.size;
  }

  async #drain(claim: string): Promise<void> {
    const queue = this.#waiting.get(claim) ?? [];
    while (queue.length > 0) await this.#commit(queue.splice(0, this.#o.maxGroup ?? 50));
    this.#waiting.delete(claim);
  }

  async #commit(batch: Waiting[]): Promise<void> {
    if (batch.length > 1) {
      let all: boolean;
      try {
        all = await this.#o.group(batch.map((w) => w.ack));
      } catch (err) {
        for (const w of batch) w.reject(err);
        return;
      }
      if (all) {
        this.#o.onGroup?.(batch.length);
        for (const w of batch) w.resolve();
        return;
      }
    }
    await Promise.all(batch.map((w) => this.#o.one(w.ack).then(w.resolve, w.reject)));
  }
}
