// Delivery of a reservation's claimed outbox rows: create the CR under its deterministic name; on
// AlreadyExists read it back: ours (admission id + tenant) → adopt, else → conflict; then binding
// + delivered + row done in ONE claim- and epoch-guarded transaction (transitions.ts ackCreate;
// deliveries of one claim that finish together share one: ack-group.ts).
// A delivery that can never succeed (an invalid spec, an image the controller's policy refuses)
// throws TerminalError: the reservation moves to `conflict` with its reason and the row is dead.
// Anything else is retried with capped backoff (giveBack) for as long as the reservation is
// `admitted`. No Kubernetes call runs inside a SQL transaction.
import { modelServiceSpecSchema } from '../../schema/model-service.ts';
import { imageRefusal } from '../../schema/policy.ts';
import { lastErrorText } from '../../schema/tenant-errors.ts';
import { crashPoint } from '../runtime/crash.ts';
import { errorMessage, TerminalError } from '../runtime/errors.ts';
import type { Logger } from '../runtime/log.ts';
import { isOurs, modelServiceFor } from './model-service-object.ts';
import { ack, ClaimLost, fail, holdsClaim, retryDelayMs, type ClaimedRow } from './outbox-store.ts';
import type { ReconcileScope } from './reconcile-deps.ts';
import type { ReservationRecord } from './record.ts';
import { SHOWN_FOREIGN, shownError } from './shown-errors.ts';
import { toConflict } from './step.ts';
import { ackCreate } from './transitions.ts';

/**
 * The claimed rows that deliver: every `create` row; failing that, while the reservation is
 * still `admitted` (its create row died, or was claimed by nobody in time), one `reconcile` row.
 */
export function deliveryRows(rows: readonly ClaimedRow[], rec: { state: string } | undefined): ClaimedRow[] {
  const creates = rows.filter((r) => r.kind === 'create');
  if (creates.length > 0 || rec?.state !== 'admitted') return creates;
  return rows.filter((r) => r.kind === 'reconcile').slice(0, 1);
}

/**
 * Delivers one claimed row: `delivered` (a new CR is bound, the reservation delivered), `changed`
 * (the ledger changed otherwise — an adopted CR, a conflict: the caller re-reads it) or `unchanged`.
 */
export async function deliver(d: ReconcileScope, row: ClaimedRow, rec: ReservationRecord | undefined, parent: Logger): Promise<'delivered' | 'changed' | 'unchanged'> {
  const log = parent.child({ reqId: row.requestId });
  if (!rec || rec.state !== 'admitted') {
    // Deleted before delivery, or delivered by an earlier attempt: the state machine takes it from here.
    await ack(d.db, row, d.now());
    return 'unchanged';
  }
  try {
    return await createAndAck(d, row, rec, log);
  } catch (err) {
    if (!(err instanceof TerminalError)) throw err; // transient: giveBack() retries it with backoff
    await refuse(d, rec, row, err, log);
    return 'changed';
  }
}

/** A delivery that can never succeed: the reservation moves to `conflict` with the reason, the row is dead. */
async function refuse(d: ReconcileScope, rec: ReservationRecord, row: ClaimedRow, err: TerminalError, log: Logger): Promise<void> {
  const shown = shownError(err);
  await toConflict(d, rec, { detail: err.message, shown }, await d.fence.epoch(), log);
  const now = d.now();
  const outcome = await fail(d.db, row, lastErrorText(shown), { now, retryAt: now, terminal: true });
  const fields = { seq: row.seq, kind: row.kind, reason: err.reason, error: err.message };
  if (outcome === 'dead') {
    d.metrics.deadRows.inc({ kind: row.kind });
    log.error('delivery refused: it cannot succeed', fields);
  } else {
    log.warn('delivery refused: it cannot succeed; its outbox row is no longer claimed by us, so it is not marked dead here', fields);
  }
}

async function createAndAck(d: ReconcileScope, row: ClaimedRow, rec: ReservationRecord, log: Logger): Promise<'delivered' | 'changed'> {
  const spec = modelServiceSpecSchema.safeParse(rec.spec);
  if (!spec.success) throw new TerminalError('InvalidSpec', `the admitted spec is not a valid ModelService spec: ${spec.error.message}`);
  // The policy may have been tightened since admission: what it now refuses is never created.
  // A conflict without a CR stays deletable by the tenant (its release needs no operator).
  const refusal = imageRefusal(spec.data.image, d.config.allowedRegistries);
  if (refusal) throw new TerminalError('ImagePolicy', `refused by the image policy at delivery: ${refusal}`);
  const namespace = d.namespaceFor(rec.tenant);
  const want = modelServiceFor(rec, spec.data, namespace, d.instance);
  // The tenant's namespace, with its ResourceQuota and NetworkPolicies, before anything of it runs there.
  await d.cluster.ensureTenantSpace(rec.tenant);
  if (!(await holdsClaim(d.db, row, d.now()))) throw new ClaimLost(row.seq); // given back (lost), never created
  const { created, object } = await d.cluster.createModelService(want);
  if (created) d.created?.(object);
  crashPoint('after-cr-create-before-ack');
  if (!created && !isOurs(object, rec)) {
    await toConflict(d, rec, { detail: `a ModelService named ${want.metadata.name} exists and is not this admission's`, shown: SHOWN_FOREIGN }, await d.fence.epoch(), log);
    await ack(d.db, row, d.now());
    return 'changed';
  }
  const acked = { row, cr: { namespace, name: want.metadata.name, uid: object.metadata.uid ?? '' } };
  await (d.ackDelivery ? d.ackDelivery(acked) : ackCreate(d.db, acked.row, acked.cr, d.now()));
  crashPoint('after-ack');
  d.metrics.delivered.inc({ outcome: created ? 'created' : 'adopted' });
  log.info(created ? 'ModelService created' : 'ModelService adopted after AlreadyExists', { name: want.metadata.name, uid: object.metadata.uid });
  // An adopted CR may sit in the cache already (no informer event will bring the key back): step now.
  return created ? 'delivered' : 'changed';
}

/**
 * Gives the claimed rows back after a failed reconcile: retried with capped backoff, dead only
 * when the error is terminal. Returns the rows whose failure could not be recorded.
 */
export async function giveBack(d: ReconcileScope, rows: ClaimedRow[], err: unknown, log: Logger): Promise<ClaimedRow[]> {
  const now = d.now();
  const terminal = err instanceof TerminalError;
  // The row keeps what the tenant is shown; the error itself goes to the log only.
  const shown = shownError(err);
  const unrecorded: ClaimedRow[] = [];
  for (const row of rows) {
    const retryAt = new Date(now.getTime() + retryDelayMs(row.attempts + 1, d.config.outboxBackoff));
    const outcome = await fail(d.db, row, lastErrorText(shown), { now, retryAt, terminal }).catch(() => {
      unrecorded.push(row);
      return 'unknown';
    });
    if (outcome === 'dead') {
      d.metrics.deadRows.inc({ kind: row.kind });
      log.error('outbox row is dead: its error cannot be retried away', { seq: row.seq, kind: row.kind, code: shown.code, error: errorMessage(err) });
    } else if (outcome === 'retry') {
      log.info('outbox row retried later', { seq: row.seq, kind: row.kind, attempt: row.attempts + 1, retryAt: retryAt.toISOString(), code: shown.code, error: errorMessage(err) });
    } else if (outcome === 'lost') {
      // Its lease ran out, it was claimed again, or a new leader took over: the holder retries it.
      log.info('outbox row not given back: its claim was lost', { seq: row.seq, kind: row.kind, error: errorMessage(err) });
    }
  }
  return unrecorded;
}
