// What the tenant is shown (`lastError`: a code and a message, schema/tenant-errors.ts) for the
// reservation controller's errors and decisions. Pure. The message names nothing internal: no API
// path, namespace, SQL, stack, service account, or another tenant's admission; the details are in
// the controller's logs and, for a conflict, in the Warning event on the ModelService.
import { DatabaseUnavailable } from '../../ledger/db.ts';
import type { LastError } from '../../schema/tenant-errors.ts';
import { KubeApiError, TerminalError } from '../runtime/errors.ts';
import type { ObservedCR } from './decide.ts';
import { ForeignNamespace } from '../tenant/space.ts';

const INTERNAL: LastError = { code: 'Internal', message: "an unexpected error in the controller; it retries (the controller's logs have the details)" };

/** A Kubernetes StatusReason (e.g. InternalError, ServiceUnavailable): one word; anything else is not repeated. */
const STATUS_REASON = /^[A-Za-z]{1,40}$/;

/** Admission control's refusal: a ValidatingAdmissionPolicy's "… denied request: <message>", a webhook's "… denied the request: <message>". */
const DENIED = /\bdenied (?:the )?request: ([\s\S]+)$/;

/** The error a delivery or a step failed with, as the tenant is shown it on the outbox row it is retried for (or dead of). */
export function shownError(err: unknown): LastError {
  if (err instanceof TerminalError) {
    if (err.reason === 'ImagePolicy') return { code: 'ImagePolicy', message: err.message };
    if (err.reason === 'InvalidSpec') return { code: 'InvalidSpec', message: 'the admitted spec is not a valid ModelService spec' };
    return INTERNAL;
  }
  if (err instanceof KubeApiError) {
    // The policy's message is the operator's words to whoever creates the object.
    const denied = [400, 403, 422].includes(err.code) ? DENIED.exec(err.status?.message ?? '')?.[1]?.trim() : undefined;
    if (denied) return { code: 'ClusterPolicy', message: `the cluster's admission control refused the ModelService: ${denied}` };
    const reason = STATUS_REASON.test(err.reason) ? ` ${err.reason}` : '';
    return { code: 'ClusterError', message: `the Kubernetes API answered ${err.code}${reason}` };
  }
  if (err instanceof ForeignNamespace) return { code: 'TenantNamespace', message: "the tenant's namespace cannot be used: an operator must resolve it (the controller's logs name it)" };
  if (err instanceof DatabaseUnavailable) return { code: 'LedgerUnavailable', message: 'the ledger database did not answer' };
  if (unreachable(err)) return { code: 'ClusterUnreachable', message: 'the Kubernetes API did not answer' };
  return INTERNAL;
}

/** fetch() to the API server failed (refused, reset, DNS) or timed out. The database's own failures are DatabaseUnavailable. */
function unreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === 'TimeoutError' || (err instanceof TypeError && err.message === 'fetch failed');
}

/** Why a reservation moved to `conflict`: another admission's ModelService under its name, or ours replaced (another UID). */
export function shownConflict(rec: { id: string; tenant: string }, cr: Pick<ObservedCR, 'admissionId' | 'tenant'> | null): LastError {
  if (cr && cr.admissionId === rec.id && cr.tenant === rec.tenant) {
    return {
      code: 'ModelServiceReplaced',
      message: 'the ModelService under its name is not the one created for it (another UID than the bound one): an operator must resolve it',
    };
  }
  return SHOWN_FOREIGN;
}

/** A ModelService under its name that is another admission's. */
export const SHOWN_FOREIGN: LastError = { code: 'ForeignModelService', message: 'a ModelService under its name belongs to another admission: an operator must resolve it' };

/** The never-Ready deadline passed: the CR is deleted, the reservation releasing. */
export const shownNeverReady = (deadlineMs: number): LastError => ({
  code: 'NeverReady',
  message: `never Ready within ${deadlineMs} ms of its creation: deleted, its quota released once its pods are gone`,
});

/** A tenant's DELETE. */
export const SHOWN_DELETED: LastError = { code: 'DeletedByTenant', message: 'deleted by the tenant' };

/** Its ModelService went away (or is going) behind ModelDock's back. */
export const SHOWN_DELETED_OUTSIDE: LastError = {
  code: 'DeletedOutsideModelDock',
  message: 'its ModelService was deleted outside ModelDock: its quota is released once its pods are gone',
};
