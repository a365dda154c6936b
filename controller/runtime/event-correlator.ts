// What client-go's EventCorrelator (tools/record/events_cache.go) does before an Event is sent,
// as a pure decision with an injected clock, so a reconcile loop cannot flood the API server:
// - aggregation: events about one object with the same type and reason but different notes —
//   more than `maxSimilar` (10) of them within `aggregateWindowMs` (10 min) — collapse into one
//   "(combined from similar events): <note>" event;
// - de-duplication: an identical event (or a second aggregate) within `dedupWindowMs` is not
//   sent again (client-go PATCHes a count onto the first one; we keep the first and drop the
//   repeat — the count is not worth a write);
// - spam filter: a token bucket per object, `spamBurst` (25) events, refilled one per
//   `spamRefillMs` (5 min) — client-go's defaults.
// Every table is an LRU of at most `maxEntries` keys (4096, client-go's maxLruCacheEntries).

export interface CorrelatorOptions {
  now?: () => number;
  maxSimilar?: number;
  aggregateWindowMs?: number;
  dedupWindowMs?: number;
  spamBurst?: number;
  spamRefillMs?: number;
  maxEntries?: number;
}

export type CorrelatorDecision = { send: true; note: string; aggregated: boolean } | { send: false; why: 'duplicate' | 'spam' };

const AGGREGATE_PREFIX = '(combined from similar events): ';

/** A Map used as an LRU: touching a key moves it last; the first key is evicted beyond `max`. */
function touch<V>(m: Map<string, V>, key: string, value: V, max: number): void {
  m.delete(key);
  m.set(key, value);
  if (m.size > max) m.delete(m.keys().next().value as string);
}

export class EventCorrelator {
  readonly #o: Required<CorrelatorOptions>;
  readonly #similar = new Map<string, { since: number; notes: Set<string> }>();
  readonly #sent = new Map<string, number>();
  readonly #spam = new Map<string, { tokens: number; at: number }>();

  constructor(o: CorrelatorOptions = {}) {
    this.#o = {
      now: o.now ?? Date.now,
      maxSimilar: o.maxSimilar ?? 10,
      aggregateWindowMs: o.aggregateWindowMs ?? 600_000,
      dedupWindowMs: o.dedupWindowMs ?? 600_000,
      spamBurst: o.spamBurst ?? 25,
      spamRefillMs: o.spamRefillMs ?? 300_000,
      maxEntries: o.maxEntries ?? 4096,
    };
  }

  /** `object` identifies the regarding object (its uid); decides whether and what to send. */
  decide(object: string, type: string, reason: string, note: string): CorrelatorDecision {
    const now = this.#o.now();
    const max = this.#o.maxEntries;

    const aggKey = `${object}|${type}|${reason}`;
    let similar = this.#similar.get(aggKey);
    if (!similar || now - similar.since > this.#o.aggregateWindowMs) similar = { since: now, notes: new Set() };
    similar.notes.add(note);
    touch(this.#similar, aggKey, similar, max);
    const aggregated = similar.notes.size > this.#o.maxSimilar;

    const id = aggregated ? `${aggKey}|*` : `${aggKey}|${note}`;
    const last = this.#sent.get(id);
    if (last !== undefined && now - last < this.#o.dedupWindowMs) return { send: false, why: 'duplicate' };

    const bucket = this.#spam.get(object) ?? { tokens: this.#o.spamBurst, at: now };
    bucket.tokens = Math.min(this.#o.spamBurst, bucket.tokens + (now - bucket.at) / this.#o.spamRefillMs);
    bucket.at = now;
    if (bucket.tokens < 1) {
      touch(this.#spam, object, bucket, max);
      return { send: false, why: 'spam' };
    }
    bucket.tokens -= 1;
    touch(this.#spam, object, bucket, max);
    touch(this.#sent, id, now, max);
    return { send: true, note: aggregated ? `${AGGREGATE_PREFIX}${note}` : note, aggregated };
  }
}
