// @ts-check
// How the page words an admission that autoscales (spec.autoscale): "auto 1–8: desired 4,
// charged 3" — desired being what the load asks for now (autoscaleStatus.desiredReplicas),
// charged what the quota covers — a badge per condition the autoscaler reports (QuotaLimited,
// MetricsUnavailable, Panic) whose title is its message, and its last change. Pure. The API
// reports no count of ready pods: readiness stays the state and the startup timeline.

/**
 * @typedef {{ minReplicas: number, maxReplicas: number, targetQueuePerReplica: number }} AutoscaleSpec
 * @typedef {{ type: string, reason?: string, message?: string, since?: string }} AutoscaleCondition
 * @typedef {{ at: string, fromReplicas: number, toReplicas: number, desiredReplicas?: number, reason: string }} AutoscaleDecision
 * @typedef {{ desiredReplicas?: number | null, readyReplicas?: number, load?: number | null, panic?: boolean, lastDecision?: AutoscaleDecision | null,
 *   conditions?: AutoscaleCondition[], observedAt?: string | null }} AutoscaleStatus
 */

/** The conditions the autoscaler reports, in the order the page shows them. */
export const CONDITION_TYPES = ['QuotaLimited', 'MetricsUnavailable', 'Panic'];

/**
 * "auto 1–8: desired 4, charged 3, ready 3" (desired: what the load asks for; not known before the first
 * reading; ready: the pods that carry the load when the autoscaler last looked).
 * @param {AutoscaleSpec} spec @param {AutoscaleStatus | null | undefined} status @param {number | undefined} charged
 */
export function autoscaleText(spec, status, charged) {
  const desired = status?.desiredReplicas;
  const ready = typeof status?.readyReplicas === 'number' ? `, ready ${status.readyReplicas}` : '';
  return `auto ${spec.minReplicas}–${spec.maxReplicas}: desired ${desired ?? 'not known yet'}, charged ${charged ?? '?'}${ready}`;
}

/**
 * The conditions to show as badges, known ones first in CONDITION_TYPES order, each with its title.
 * @param {AutoscaleStatus | null | undefined} status
 * @returns {{ type: string, title: string }[]}
 */
export function conditionBadges(status) {
  const rank = (/** @type {string} */ t) => (CONDITION_TYPES.includes(t) ? CONDITION_TYPES.indexOf(t) : CONDITION_TYPES.length);
  return [...(status?.conditions ?? [])].sort((a, b) => rank(a.type) - rank(b.type)).map((c) => ({ type: c.type, title: c.message || c.reason || c.type }));
}

/**
 * "last change 2 → 3 at <time>" (and what the load asked for when the quota allowed less); null before the first.
 * @param {AutoscaleStatus | null | undefined} status @param {(iso: string) => string} toTime
 */
export function decisionText(status, toTime) {
  const d = status?.lastDecision;
  if (!d) return null;
  const less = d.desiredReplicas !== undefined && d.desiredReplicas !== d.toReplicas ? ` (asked for ${d.desiredReplicas})` : '';
  return `last change ${d.fromReplicas} → ${d.toReplicas}${less} at ${toTime(d.at)}`;
}
