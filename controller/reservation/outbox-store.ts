// The controller's side of the outbox: claim the due rows routed to its cluster with a
// conditional-UPDATE lease (no SKIP LOCKED), acknowledge or fail them. Every write is fenced by the
// controller epoch (the fence of the row's tenant on the row's cluster, ledger/fence.ts) and by the claim itself (claimed_by is unique per claim
// batch; claimed_until must not have passed), so a paused ex-leader or a worker whose lease ran
// out cannot acknowledge anything. The claim scans ONE shard (the poller walks the shards); an
// acknowledgement names its row by (tenant, seq), so it is single-shard.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../ledger/db.ts';
import { int, str, strOrNull } from '../../ledger/columns.ts';
import { FENCE } from '../../ledger/fence.ts';
import type { OutboxKind } from '../../ledger/outbox.ts';
import { LAST_ERROR_MAX_CHARS } from '../../schema/tenant-errors.ts';
import { printableWithin } from '../../schema/text.ts';
import { jitteredBackoffMs } from '../runtime/backoff.ts';

export interface Claim {
  by: string;
  until: Date;
  /** The cluster whose rows were claimed (the claiming controller's). */
  cluster: string;
  epoch: number;
  /** The shard its rows were claimed on (LedgerShard.name; '' or absent: the one database). */
  shard?: string;
}

export interface ClaimedRow {
  seq: number;
  tenant: string;
  reservationId: string;
  kind: OutboxKind;
  /** Failed attempts so far (a lease that ran out or a leader change is not a failure). */
  attempts: number;
  requestId: string | null;
  claim: Claim;
}

export interface ClaimOptions {
  holder: string;
  /** Only rows routed to this cluster are claimed (the controller's own; `default`: the unregistered one). */
  cluster: string;
  epoch: number;
  leaseMs: number;
  limit: number;
  now: Date;
  /** The shard `q` targets (LedgerShard.name), recorded on the claim. */
  shard?: string;
  /** Runs before the claim with the tenants of the due rows (the poller raises their fences). */
  beforeClaim?: (tenants: string[]) => Promise<void>;
}

/**
 * Claims up to `limit` due rows of `o.cluster` on one shard (`q`: a shard's Db, ledger/shards.ts), oldest first.
 * Three statements, no transaction needed. A row is claimable when unclaimed, when its lease ran
 * out, or when it was claimed under an older epoch: a deposed leader is fenced anyway, so a new
 * leader need not wait for its leases.
 */
export async function claimDue(q: Queryable, o: ClaimOptions): Promise<ClaimedRow[]> {
  const due = await q.execute(
    `SELECT seq, tenant FROM outbox
      WHERE cluster = ? AND done_at IS NULL AND dead_at IS NULL AND available_at <= ?
        AND (claimed_until IS NULL OR claimed_until < ? OR epoch < ?)
      ORDER BY seq LIMIT ?`,
    [o.cluster, o.now, o.now, o.epoch, o.limit],
  );
  if (due.rows.length === 0) return [];
  const seqs = due.rows.map((r) => int(r.seq));
  await o.beforeClaim?.([...new Set(due.rows.map((r) => str(r.tenant)))]);
  const claim: Claim = { by: `${o.holder}/${randomBytes(6).toString('hex')}`, until: new Date(o.now.getTime() + o.leaseMs), cluster: o.cluster, epoch: o.epoch, shard: o.shard ?? '' };
  const took = await q.execute(
    `UPDATE outbox o ${FENCE('o')}
        SET o.claimed_by = ?, o.claimed_until = ?, o.epoch = ?
      WHERE o.seq IN (?) AND o.done_at IS NULL AND o.dead_at IS NULL
        AND (o.claimed_until IS NULL OR o.claimed_until < ? OR o.epoch < ?)`,
    [o.epoch, claim.by, claim.until, o.epoch, seqs, o.now, o.epoch],
  );
  if (took.rowsAffected === 0) return [];
  const rows = await q.execute(
    `SELECT seq, tenant, reservation_id, kind, attempts, request_id FROM outbox WHERE seq IN (?) AND claimed_by = ? ORDER BY seq`,
    [seqs, claim.by],
  );
  return rows.rows.map((r) => ({
    seq: int(r.seq),
    tenant: str(r.tenant),
    reservationId: str(r.reservation_id),
    kind: str(r.kind) as OutboxKind,
    attempts: int(r.attempts),
    requestId: strOrNull(r.request_id),
    claim,
  }));
}

const HOLDS = 'o.tenant = ? AND o.seq = ? AND o.claimed_by = ? AND o.claimed_until >= ? AND o.done_at IS NULL';

/** Marks a row done while we still hold its claim; a reconcile row frees its dedupe key. */
export async function ack(q: Queryable, row: ClaimedRow, now: Date): Promise<boolean> {
  const r = await q.execute(
    `UPDATE outbox o ${FENCE('o')}
        SET o.done_at = ?, o.claimed_until = NULL, o.last_error = NULL,
            o.dedupe_key = CASE WHEN o.kind = 'reconcile' THEN NULL ELSE o.dedupe_key END
      WHERE ${HOLDS}`,
    [row.claim.epoch, now, row.tenant, row.seq, row.claim.by, now],
  );
  return r.rowsAffected === 1;
}

/**
 * Is this row's claim still ours, under this leader's fence? Read right before a CR is created:
 * a deposed leader (its tenant's fence raised by a successor, who may have released the charge
 * since) or a claim that ran out (the row claimed again) creates nothing.
 */
export async function holdsClaim(q: Queryable, row: ClaimedRow, now: Date): Promise<boolean> {
  const r = await q.execute(`SELECT 1 AS held FROM outbox o ${FENCE('o')} WHERE ${HOLDS}`, [row.claim.epoch, row.tenant, row.seq, row.claim.by, now]);
  return r.rows.length === 1;
}

export class ClaimLost extends Error {
  constructor(seq: number) {
    super(`outbox row ${seq}: claim lost (lease expired, re-claimed, or epoch changed)`);
    this.name = 'ClaimLost';
  }
}

/** What fail() wrote: the row given back for a retry, the row dead, or nothing (the claim no longer held). */
export type FailOutcome = 'retry' | 'dead' | 'lost';

/**
 * Counts a failed attempt. A transient failure gives the row back for `retryAt` (backoff): it is
 * retried for as long as it is not done — a delivery never dies of an outage. Only a `terminal`
 * failure (the work can never succeed, e.g. an invalid spec) marks the row dead. Like ack(), it
 * writes only while the claim holds: `lost` when it matched no row (lease ran out, re-claimed, or
 * epoch changed), and then nothing was written. `error` is what the tenant is shown (a last error
 * text, schema/tenant-errors.ts), stored printable and at most LAST_ERROR_MAX_CHARS characters.
 */
export async function fail(
  q: Queryable,
  row: ClaimedRow,
  error: string,
  o: { now: Date; retryAt: Date; terminal?: boolean },
): Promise<FailOutcome> {
  const dead = o.terminal === true;
  const r = await q.execute(
    `UPDATE outbox o ${FENCE('o')}
        SET o.attempts = o.attempts + 1, o.claimed_by = NULL, o.claimed_until = NULL, o.last_error = ?, o.available_at = ?,
            o.dead_at = ?, o.dedupe_key = CASE WHEN ? AND o.kind = 'reconcile' THEN NULL ELSE o.dedupe_key END
      WHERE ${HOLDS}`,
    [row.claim.epoch, printableWithin(error, LAST_ERROR_MAX_CHARS), o.retryAt, dead ? o.now : null, dead, row.tenant, row.seq, row.claim.by, o.now],
  );
  if (r.rowsAffected !== 1) return 'lost';
  return dead ? 'dead' : 'retry';
}

export interface Backoff {
  /** Delay after the first failure. */
  baseMs: number;
  /** Longest delay between two attempts (OUTBOX_BACKOFF_CAP_MS, default 5 min). */
  capMs: number;
}

export const DEFAULT_OUTBOX_BACKOFF: Backoff = { baseMs: 1000, capMs: 300_000 };

/** Exponential backoff for the n-th attempt (1-based), jittered within [cap/2, cap]. */
export function retryDelayMs(attempt: number, backoff: Backoff = DEFAULT_OUTBOX_BACKOFF, random = Math.random): number {
  return Math.round(jitteredBackoffMs(attempt - 1, backoff.baseMs, backoff.capMs, random));
}
