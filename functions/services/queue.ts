// The queue as a tenant sees it: positions and estimated waits of its queued admissions (GET
// /queue, and GET /requests/:id of a queued one), and the dequeue the Worker runs when something
// it did may let a queued admission in (a cancel) — the controller runs it after every release and
// refund, the cron sweep as the safety net (functions/services/sweep.ts).
import { estimateWait, type WaitEstimate } from '../../ledger/queue-pick.ts';
import { readQueue } from '../../ledger/queue.ts';
import { byWorker, dequeueFor, type FairDequeueResult } from '../../ledger/queue-fair.ts';
import { addAmounts } from '../../ledger/resources.ts';
import { RESOURCE_NAMES, type Amounts } from '../../schema/model-service.ts';
import type { QueueView } from '../../schema/api.ts';
import { readQuota } from '../db/quota.ts';
import { queuedThrough, releaseRate } from '../db/queue.ts';
import type { AdmissionRecord } from '../db/reservations.ts';
import type { ServiceDeps } from './deps.ts';

/** The most queued admissions GET /queue lists (positions beyond it are still counted). */
export const QUEUE_LIST_LIMIT = 100;

const zero = (): Amounts => Object.fromEntries(RESOURCE_NAMES.map((r) => [r, 0])) as Amounts;

/**
 * With clusters registered, an admission whose quota is free but is still queued waits for cluster
 * room, which other tenants share: the tenant's own release rate says nothing about it, and what
 * the others hold is not the tenant's to see. So no estimate, with that reason.
 */
export const CLUSTER_ROOM_REASON =
  'its quota is free, but no cluster has room for it now: it is admitted when cluster room frees up, which other tenants share (no estimate)';

/** The estimates as shown: a "free now" one is the cluster-room reason once clusters are registered (read only then). */
async function shownEstimates(deps: ServiceDeps, estimates: WaitEstimate[]): Promise<WaitEstimate[]> {
  if (!estimates.some((e) => e.seconds === 0) || !(await deps.placer.registered(deps.db, false))) return estimates;
  return estimates.map((e) => (e.seconds === 0 ? { seconds: null, method: 'release-rate', reason: CLUSTER_ROOM_REASON } : e));
}

/** A queued admission with its position and estimated wait filled in (3 reads); any other as it is. */
export async function withQueuePlace(deps: ServiceDeps, a: AdmissionRecord, seq: number | null): Promise<AdmissionRecord> {
  if (a.state !== 'queued' || !a.queue || seq === null) return a;
  const now = deps.clock();
  const { quota } = await readQuota(deps.db, a.tenant);
  const through = await queuedThrough(deps.db, a.tenant, seq);
  const rate = await releaseRate(deps.db, a.tenant, now);
  const [estimate] = await shownEstimates(deps, [estimateWait(through.needed, quota, rate)]);
  return { ...a, queue: { ...a.queue, position: through.count, estimate: estimate! } };
}

/** The tenant's queue in FIFO order with positions and estimates (3 reads). */
export async function getQueue(deps: ServiceDeps, tenant: string): Promise<QueueView> {
  const now = deps.clock();
  const { quota, queued } = await readQuota(deps.db, tenant);
  const entries = await readQueue(deps.db, tenant, QUEUE_LIST_LIMIT);
  const rate = entries.length > 0 ? await releaseRate(deps.db, tenant, now) : null;
  let needed = zero();
  const raw: WaitEstimate[] = [];
  for (const e of entries) {
    needed = addAmounts(needed, e.amounts);
    raw.push(estimateWait(needed, quota, rate!));
  }
  const estimates = await shownEstimates(deps, raw);
  const items = entries.map((e, i) => ({ id: e.id, position: i + 1, amounts: e.amounts, estimate: estimates[i]! }));
  return { tenant, queued, items };
}

/**
 * Lets queued admissions in as far as quota and room allow now (the Worker's trigger): the tenant's
 * own queue, or with clusters registered its shard's fair pass (ledger/queue-fair.ts).
 */
export function dequeueByWorker(deps: ServiceDeps, tenant: string, requestId: string): Promise<FairDequeueResult> {
  return dequeueFor(deps.db, tenant, { byFor: byWorker, now: deps.clock, requestId, placer: deps.placer });
}
