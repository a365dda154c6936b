// @ts-check
// The startup timeline of an admission (admitted → delivered → scheduled → started → ready) as
// both tenant tools show it: the dashboard loads this file as a browser module, the CLI imports
// it. Pure: no DOM, no I/O.
//
// An API that reports `timeline` ({admittedAt, deliveredAt, scheduledAt, startedAt, readyAt},
// each nullable) is read as is. An API without it (before the startup timeline existed) is read
// from what it does report: admitted = createdAt, delivered = the state or the binding, ready =
// binding.firstReadyAt or the state. Stages it does not report are `unreported`, never invented.

/** @typedef {'admitted' | 'delivered' | 'scheduled' | 'started' | 'ready'} Stage */
/**
 * @typedef {object} Timeline
 * @property {string | null | undefined} [admittedAt]
 * @property {string | null | undefined} [deliveredAt]
 * @property {string | null | undefined} [scheduledAt]
 * @property {string | null | undefined} [startedAt]
 * @property {string | null | undefined} [readyAt]
 * @property {Partial<Record<Exclude<Stage, 'admitted'>, number | null>> | null | undefined} [sinceAdmissionMs]
 */
/**
 * @typedef {object} LastFailure
 * @property {string | null | undefined} [pod]
 * @property {string} reason
 * @property {number | null | undefined} [exitCode]
 * @property {string | null | undefined} [message]
 * @property {string | null | undefined} [at]
 */
/**
 * The fields of an admission this module reads (a structural subset of the API's admission).
 * @typedef {object} StartupFacts
 * @property {string} state
 * @property {string} createdAt
 * @property {{ firstReadyAt: string | null, everReady?: boolean } | null} binding
 * @property {Timeline | null | undefined} [timeline]
 */
/**
 * One stage as shown: `done` (reached; `at` is null when the API reports no time for it),
 * `pending` (not reached yet), `unreported` (this API does not report the stage). `sinceMs`:
 * milliseconds from admission (the API's `sinceAdmissionMs`, which never decreases from one
 * stage to the next; else computed from the times), null when unknown.
 * @typedef {{ stage: Stage, status: 'done' | 'pending' | 'unreported', at: string | null, sinceMs: number | null }} StageView
 */

/** @type {readonly Stage[]} */
export const STAGES = Object.freeze(['admitted', 'delivered', 'scheduled', 'started', 'ready']);

/** @type {Record<Stage, 'admittedAt' | 'deliveredAt' | 'scheduledAt' | 'startedAt' | 'readyAt'>} */
const FIELD = { admitted: 'admittedAt', delivered: 'deliveredAt', scheduled: 'scheduledAt', started: 'startedAt', ready: 'readyAt' };

/** States past `delivered` on the way up (the ledger's order: admitted → delivered → ready). */
const DELIVERED_STATES = ['delivered', 'ready'];

/**
 * The five stages of an admission, in order.
 * @param {StartupFacts} a
 * @returns {StageView[]}
 */
export function startupStages(a) {
  const t = a.timeline;
  if (t && typeof t === 'object') {
    /** @type {StageView[]} */
    const views = STAGES.map((stage) => {
      const at = t[FIELD[stage]] ?? null;
      const reported = stage === 'admitted' ? 0 : t.sinceAdmissionMs?.[stage];
      const sinceMs = at === null ? null : (reported ?? elapsedMs(t.admittedAt ?? a.createdAt, at));
      return { stage, status: at ? 'done' : 'pending', at, sinceMs };
    });
    // A stage with no time before a reached one was passed: reached, time not reported.
    const last = views.map((v) => v.status).lastIndexOf('done');
    return views.map((v, i) => (i < last && v.status === 'pending' ? { ...v, status: 'done' } : v));
  }
  const ready = a.state === 'ready' || Boolean(a.binding?.firstReadyAt);
  const delivered = ready || a.binding !== null || DELIVERED_STATES.includes(a.state);
  const readyAt = a.binding?.firstReadyAt ?? null;
  return [
    { stage: 'admitted', status: 'done', at: a.createdAt, sinceMs: 0 },
    { stage: 'delivered', status: delivered ? 'done' : 'pending', at: null, sinceMs: null },
    { stage: 'scheduled', status: 'unreported', at: null, sinceMs: null },
    { stage: 'started', status: 'unreported', at: null, sinceMs: null },
    { stage: 'ready', status: ready ? 'done' : 'pending', at: readyAt, sinceMs: elapsedMs(a.createdAt, readyAt) },
  ];
}

/**
 * The first stage not reached yet, or null when the admission is ready.
 * @param {StageView[]} stages
 * @returns {Stage | null}
 */
export function nextStage(stages) {
  return stages.find((s) => s.status === 'pending')?.stage ?? null;
}

/**
 * Milliseconds from `from` to `to` (RFC 3339), or null when either is missing or unparsable.
 * @param {string | null} from
 * @param {string | null} to
 * @returns {number | null}
 */
export function elapsedMs(from, to) {
  if (!from || !to) return null;
  const d = Date.parse(to) - Date.parse(from);
  return Number.isFinite(d) ? d : null;
}

/**
 * "850ms", "4.2s", "3m07s", "2h05m".
 * @param {number} ms
 * @returns {string}
 */
export function formatDuration(ms) {
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)}ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)}s`;
  const s = Math.floor(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * One line describing a pod failure: "pod p-1: CrashLoopBackOff, exit code 1 — back-off restarting".
 * @param {LastFailure} f
 * @returns {string}
 */
export function describeFailure(f) {
  const head = f.pod ? `pod ${f.pod}: ${f.reason}` : f.reason;
  const code = typeof f.exitCode === 'number' ? `, exit code ${f.exitCode}` : '';
  const msg = f.message ? ` — ${f.message.replace(/\s+/g, ' ').trim()}` : '';
  return `${head}${code}${msg}`;
}
