// The startup progress the tenant API shows: what the ModelService status observed —
// the first pod bound to a node, the first container running, the most recent pod failure — as
// the binding stores it. Pure: the reconciler writes `progressChange()` when it is not undefined.
import { failureColumn, failureOrNull } from '../../ledger/columns.ts';
import { canonicalJson } from '../../schema/canonical-json.ts';
import type { Failure, ModelServiceStatus } from '../../schema/model-service.ts';

export interface Progress {
  scheduledAt: Date | null;
  startedAt: Date | null;
  lastFailure: Failure | null;
}

const dateOrNull = (t: string | undefined): Date | null => {
  const d = t === undefined ? null : new Date(t);
  return d && !Number.isNaN(d.getTime()) ? d : null;
};

/** The observed progress as the binding can hold it: a failure's message cut to fit its column (so an unchanged failure compares equal to the stored one). */
export function progressOf(status: ModelServiceStatus | undefined): Progress {
  const failure = status?.lastFailure;
  return { scheduledAt: dateOrNull(status?.scheduledAt), startedAt: dateOrNull(status?.startedAt), lastFailure: failure ? failureOrNull(failureColumn(failure)) : null };
}

/**
 * What to write so the stored progress reflects the observed one, or undefined when nothing is
 * new: a time is set once (a stored time is never moved or cleared), a failure replaces the
 * stored one when it differs (a cleared failure stays: it is the LAST failure).
 */
export function progressChange(stored: Progress, observed: Progress): Progress | undefined {
  const change: Progress = {
    scheduledAt: stored.scheduledAt ? null : observed.scheduledAt,
    startedAt: stored.startedAt ? null : observed.startedAt,
    lastFailure:
      observed.lastFailure && (!stored.lastFailure || canonicalJson(stored.lastFailure) !== canonicalJson(observed.lastFailure)) ? observed.lastFailure : null,
  };
  return change.scheduledAt || change.startedAt || change.lastFailure ? change : undefined;
}
