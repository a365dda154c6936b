// What a tenant is shown when an admission went wrong: `lastError` is a stable code and a short
// message, `lastFailure.reason` is one of FAILURE_REASONS. What lies behind them (API paths,
// namespaces, SQL, stacks, another tenant's names) goes to the controller's logs, never here.
// The ledger stores a last error as the text "<code>: <message>" (reservation.last_error,
// outbox.last_error), printable and bounded; docs/admission-api.md lists the codes.
import { fitSerialized, printableWithin } from './text.ts';

export const LAST_ERROR_CODES = [
  /** Not Ready within the deadline: deleted, its quota released once its pods are gone. */
  'NeverReady',
  /** Deleted by the tenant (DELETE /requests/{id}). */
  'DeletedByTenant',
  /** Its ModelService was deleted outside ModelDock: released once its pods are gone. */
  'DeletedOutsideModelDock',
  /** A ModelService under its name belongs to another admission (conflict). */
  'ForeignModelService',
  /** The ModelService under its name is not the one created for it (another UID; conflict). */
  'ModelServiceReplaced',
  /** Its stored spec is not a valid ModelService spec (conflict, never delivered). */
  'InvalidSpec',
  /** The controller's image policy refuses its image (conflict, never delivered). */
  'ImagePolicy',
  /** The cluster's admission control refused the ModelService (retried). */
  'ClusterPolicy',
  /** The tenant's namespace cannot be used: its name is taken by a namespace that is not this tenant's, or it is being deleted (retried; an operator resolves it). */
  'TenantNamespace',
  /** The Kubernetes API answered an error (retried). */
  'ClusterError',
  /** The Kubernetes API did not answer (retried). */
  'ClusterUnreachable',
  /** The ledger database did not answer (retried). */
  'LedgerUnavailable',
  /** An unexpected error in the controller (retried; the controller's logs have the details). */
  'Internal',
  /** A text with no code: an operator's note on a resolved conflict, or one written by an older version. */
  'Unclassified',
] as const;
export type LastErrorCode = (typeof LAST_ERROR_CODES)[number];

export interface LastError {
  code: LastErrorCode;
  message: string;
}

/** The most characters a stored last error holds ("<code>: <message>"). */
export const LAST_ERROR_MAX_CHARS = 1000;

/** The text a last_error column stores: "<code>: <message>", printable, at most LAST_ERROR_MAX_CHARS characters. */
export function lastErrorText(e: LastError): string {
  return fitSerialized(e.message, (m) => `${e.code}: ${m}`, { max: LAST_ERROR_MAX_CHARS, unit: 'characters' });
}

const STORED = /^([A-Za-z]+): ([\s\S]*)$/;
const isCode = (s: string | undefined): s is LastErrorCode => (LAST_ERROR_CODES as readonly string[]).includes(s ?? '');

/** A stored last error as the tenant is shown it, printable and bounded; a text without a known code is `Unclassified`. */
export function readLastError(stored: string | null): LastError | null {
  if (stored === null) return null;
  const m = STORED.exec(stored);
  if (m && isCode(m[1])) return { code: m[1], message: printableWithin(m[2] ?? '', LAST_ERROR_MAX_CHARS) };
  return { code: 'Unclassified', message: printableWithin(stored, LAST_ERROR_MAX_CHARS) };
}

/** Waiting reasons of a container that mean it does not start (the kubelet's words). */
export const WAITING_FAILURE_REASONS = [
  'ImagePullBackOff',
  'ErrImagePull',
  'ErrImageNeverPull',
  'InvalidImageName',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
] as const;

/**
 * lastFailure.reason: a waiting reason above; `OOMKilled` (a container over its memory limit);
 * `Error` (a container that exited with another non-zero code); `Unschedulable` (no node can
 * take the pod); `QuotaExceeded` (the tenant namespace's ResourceQuota refused a pod);
 * `FailedCreate` (the cluster refused to create a pod for another reason). Nothing else.
 */
export const FAILURE_REASONS = [...WAITING_FAILURE_REASONS, 'OOMKilled', 'Error', 'Unschedulable', 'QuotaExceeded', 'FailedCreate'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** The most characters of a pod's message a lastFailure shows (a termination message may have 4 KiB). */
export const FAILURE_MESSAGE_MAX_CHARS = 1024;
