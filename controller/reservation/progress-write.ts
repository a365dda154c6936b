// Copies the startup progress a ModelService status observed onto the binding (progress.ts
// decides what is new; transitions.ts recordProgress writes it). It never stands in the way of
// the step's action: the progress is what the tenant reads about a start, while the action (the
// never-Ready deadline, a release, a change of replicas) moves pods and quota. A write that fails
// is logged with the reconcile key (bound to `log`) and the step goes on; the next look at the
// reservation writes it again.
import type { ModelServiceStatus } from '../../schema/model-service.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/log.ts';
import { progressChange, progressOf } from './progress.ts';
import type { ReconcileScope } from './reconcile-deps.ts';
import type { ReservationRecord } from './record.ts';
import { recordProgress } from './transitions.ts';

/** Records what is new in `status` on the reservation's binding; never throws. */
export async function recordStartupProgress(
  d: Pick<ReconcileScope, 'db'>,
  rec: ReservationRecord,
  status: ModelServiceStatus | undefined,
  epoch: number,
  now: Date,
  log: Logger,
): Promise<void> {
  if (!rec.binding) return;
  const change = progressChange(rec.binding, progressOf(status));
  if (!change) return;
  const fields = { scheduled: !!change.scheduledAt, started: !!change.startedAt, failure: change.lastFailure?.reason };
  try {
    if (await recordProgress(d.db, rec, change, epoch, now)) log.debug('startup progress recorded', fields);
  } catch (err) {
    log.warn('startup progress not recorded: the step acts all the same, the next look writes it again', { ...fields, error: errorMessage(err) });
  }
}
