// The startup timeline of an admission: the five moments of a start — admitted (the declaration
// persisted), delivered (the ModelService created), scheduled (the first pod bound to a node),
// started (the first container running), ready (the first ready endpoint) — each with the time
// since admission. The one source of the stages: the Worker builds the API's `timeline` with
// timelineOf, the CLI and the page draw it with startupStages. The page gets this module through
// the dashboard bundle (scripts/gen-dashboard.ts serves it as /assets/startup.js), so it imports
// nothing and does no I/O. Its zod schema is timeline-schema.ts.

export const STAGES = Object.freeze(['admitted', 'delivered', 'scheduled', 'started', 'ready'] as const);
export type Stage = (typeof STAGES)[number];
type Reached = Exclude<Stage, 'admitted'>;

/** The API's `timeline`: null for a moment not reached (or not observed) yet. */
export interface Timeline {
  admittedAt: string;
  deliveredAt: string | null;
  scheduledAt: string | null;
  startedAt: string | null;
  readyAt: string | null;
  sinceAdmissionMs: Record<Reached, number | null>;
}

type Times = Pick<Timeline, 'deliveredAt' | 'scheduledAt' | 'startedAt' | 'readyAt'>;

/**
 * The moments as stored, and the milliseconds since admission to each. Kubernetes reports the
 * scheduled and started moments with second precision: such a time may read earlier than the
 * moment before it (scheduled at 12:00:05 after a delivery at 12:00:05.400). A moment cannot
 * precede the one before it, so each duration is at least the previous reached one's.
 */
export function timelineOf(admittedAt: string, t: Times): Timeline {
  const start = Date.parse(admittedAt);
  let floor = 0;
  const since = (v: string | null): number | null => {
    if (v === null) return null;
    floor = Math.max(floor, Date.parse(v) - start);
    return floor;
  };
  return {
    admittedAt,
    ...t,
    sinceAdmissionMs: { delivered: since(t.deliveredAt), scheduled: since(t.scheduledAt), started: since(t.startedAt), ready: since(t.readyAt) },
  };
}

/** A `timeline` as a client reads it: a field may be missing (an API that does not report it) or null. */
export interface ReportedTimeline {
  admittedAt?: string | null;
  deliveredAt?: string | null;
  scheduledAt?: string | null;
  startedAt?: string | null;
  readyAt?: string | null;
  sinceAdmissionMs?: Partial<Record<Reached, number | null>> | null;
}

export interface LastFailure {
  pod?: string | null;
  reason: string;
  exitCode?: number | null;
  message?: string | null;
  at?: string | null;
}

/** The fields of an admission the stages are read from (a structural subset of the API's admission). */
export interface StartupFacts {
  state: string;
  createdAt: string;
  binding: { firstReadyAt: string | null; everReady?: boolean } | null;
  timeline?: ReportedTimeline | null;
}

/**
 * One stage as shown: `done` (reached; `at` is null when the API reports no time for it),
 * `pending` (not reached yet), `unreported` (this API does not report the stage). `sinceMs`:
 * milliseconds from admission (the API's `sinceAdmissionMs`, which never decreases from one
 * stage to the next; else computed from the times), null when unknown.
 */
export interface StageView {
  stage: Stage;
  status: 'done' | 'pending' | 'unreported';
  at: string | null;
  sinceMs: number | null;
}

const FIELD: Record<Stage, keyof Omit<ReportedTimeline, 'sinceAdmissionMs'>> = {
  admitted: 'admittedAt',
  delivered: 'deliveredAt',
  scheduled: 'scheduledAt',
  started: 'startedAt',
  ready: 'readyAt',
};

/** States past `delivered` on the way up (the ledger's order: admitted → delivered → ready). */
const DELIVERED_STATES: readonly string[] = ['delivered', 'ready'];

/**
 * The five stages of an admission, in order. An admission with a `timeline` is read as is. One
 * without it is read from what the API does report: admitted = createdAt, delivered = the state or
 * the binding, ready = binding.firstReadyAt or the state. Stages the API does not report are
 * `unreported`, never invented.
 */
export function startupStages(a: StartupFacts): StageView[] {
  const t = a.timeline;
  if (t && typeof t === 'object') {
    const views = STAGES.map((stage): StageView => {
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

/** The first stage not reached yet, or null when the admission is ready. */
export function nextStage(stages: readonly StageView[]): Stage | null {
  return stages.find((s) => s.status === 'pending')?.stage ?? null;
}

/** Milliseconds from `from` to `to` (RFC 3339), or null when either is missing or unparsable. */
export function elapsedMs(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  const d = Date.parse(to) - Date.parse(from);
  return Number.isFinite(d) ? d : null;
}

/** "850ms", "4.2s", "3m07s", "2h05m". */
export function formatDuration(ms: number): string {
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)}ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)}s`;
  const s = Math.floor(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One line describing a pod failure: "pod p-1: CrashLoopBackOff, exit code 1 — back-off restarting". */
export function describeFailure(f: LastFailure): string {
  const head = f.pod ? `pod ${f.pod}: ${f.reason}` : f.reason;
  const code = typeof f.exitCode === 'number' ? `, exit code ${f.exitCode}` : '';
  const msg = f.message ? ` — ${f.message.replace(/\s+/g, ' ').trim()}` : '';
  return `${head}${code}${msg}`;
}
