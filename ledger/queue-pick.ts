// The queue's decisions, pure: which queued admission of a tenant the quota lets in now, which have
// expired, and how long one is estimated to wait. The transactions that carry them out are
// ledger/queue.ts (the dequeue) and functions/db/queue.ts (the enqueue, cancel and reads).
//
// Ordering (docs/ledger.md, "The queue"): strict FIFO by queue_seq within a tenant, with a bounded
// bypass. The head (the first queued admission that could ever fit the tenant's hard limits) is
// admitted as soon as it fits. While it does not, a later, smaller admission that fits may pass it,
// at most `maxBypass` times; after that the freed quota is held back for the head until it fits.
// An admission larger than the tenant's hard limits can never be admitted: it is not a head (it
// waits for its TTL, a cancel or a raised limit) and holds nothing back.
import type { Shortfall } from '../schema/api.ts';
import { RESOURCE_NAMES, type Amounts, type ResourceName } from '../schema/model-service.ts';

export interface QuotaState {
  hard: number;
  used: number;
}
export type TenantQuota = Partial<Record<ResourceName, QuotaState>>;

export interface QueuedItem {
  id: string;
  seq: number;
  amounts: Amounts;
  /** How many later admissions were admitted past it. */
  bypassed: number;
  expiresAt: Date | null;
}

export type QueuePick =
  | { type: 'admit'; id: string; amounts: Amounts; /** The head it passes (a bypass), if any. */ passes: string | null }
  | { type: 'wait'; head: string; short: Shortfall[]; /** True once the head's bypass budget is spent. */ held: boolean }
  | { type: 'empty' };

/** The amounts of `want` beyond what `quota` has left (none: it fits now). */
export function shortfalls(want: Amounts, quota: TenantQuota): Shortfall[] {
  return RESOURCE_NAMES.flatMap((resource) => {
    const requested = want[resource];
    if (requested <= 0) return [];
    const q = quota[resource];
    const available = q ? Math.max(0, q.hard - q.used) : 0;
    return requested > available ? [{ resource, requested, available, short: requested - available }] : [];
  });
}

/** True when `want` is within the tenant's hard limits: it fits once enough is released. */
export const everFits = (want: Amounts, quota: TenantQuota): boolean => RESOURCE_NAMES.every((r) => want[r] <= 0 || want[r] <= (quota[r]?.hard ?? 0));

/**
 * The next admission to let in from a tenant's queue (`queue` in FIFO order, expired ones already
 * gone), given what its quota has left now.
 */
export function pickFromQueue(queue: readonly QueuedItem[], quota: TenantQuota, maxBypass: number): QueuePick {
  const head = queue.find((q) => everFits(q.amounts, quota));
  if (!head) return { type: 'empty' };
  const short = shortfalls(head.amounts, quota);
  if (short.length === 0) return { type: 'admit', id: head.id, amounts: head.amounts, passes: null };
  if (head.bypassed >= maxBypass) return { type: 'wait', head: head.id, short, held: true };
  const passer = queue.find((q) => q.seq > head.seq && shortfalls(q.amounts, quota).length === 0);
  return passer ? { type: 'admit', id: passer.id, amounts: passer.amounts, passes: head.id } : { type: 'wait', head: head.id, short, held: false };
}

/** The tenant's quota released per second over a recent window: the basis of the estimate. */
export interface ReleaseRate {
  windowSeconds: number;
  /** Release and refund movements in the window. */
  releases: number;
  /** Seconds from the first of them to now (the span the amounts were released over). */
  spanSeconds: number;
  released: Amounts;
}

export type WaitEstimate =
  | { seconds: number; method: 'release-rate'; basis: string }
  | { seconds: null; method: 'release-rate'; reason: string };

/**
 * How long until the quota has freed enough for `needed` (the amounts of this admission and of
 * every queued one ahead of it), at the rate the tenant's quota was released recently: for each
 * short resource, what is missing over what is released per second; the slowest resource decides.
 * null with the reason when nothing was released recently (no rate to extrapolate from).
 */
export function estimateWait(needed: Amounts, quota: TenantQuota, rate: ReleaseRate): WaitEstimate {
  const missing = RESOURCE_NAMES.flatMap((r) => {
    const available = quota[r] ? Math.max(0, quota[r]!.hard - quota[r]!.used) : 0;
    return needed[r] > available ? [{ r, amount: needed[r] - available }] : [];
  });
  if (missing.length === 0) return { seconds: 0, method: 'release-rate', basis: 'the quota it needs is free now: it is admitted at the next dequeue' };
  if (rate.releases === 0) {
    return { seconds: null, method: 'release-rate', reason: `nothing of this tenant's quota was released in the last ${rate.windowSeconds} s: no rate to estimate from` };
  }
  const span = Math.max(1, rate.spanSeconds);
  let worst = { r: missing[0]!.r, seconds: 0 };
  for (const m of missing) {
    const perSecond = rate.released[m.r] / span;
    if (perSecond <= 0) {
      return { seconds: null, method: 'release-rate', reason: `no ${m.r} of this tenant's quota was released in the last ${rate.windowSeconds} s: no rate to estimate from` };
    }
    const seconds = m.amount / perSecond;
    if (seconds > worst.seconds) worst = { r: m.r, seconds };
  }
  return {
    seconds: Math.ceil(worst.seconds),
    method: 'release-rate',
    basis: `${rate.releases} releases in the last ${Math.round(span)} s freed ${rate.released[worst.r]} ${worst.r}; ${missing.find((m) => m.r === worst.r)!.amount} more ${worst.r} must be freed for this admission and those ahead of it`,
  };
}
