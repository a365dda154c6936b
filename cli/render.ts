// Text rendering of admissions, lists, quota and startup stages. Pure: every function takes the
// data and a Style (colours on or off, decided once by the caller) and returns text.
import { describeFailure, elapsedMs, formatDuration, startupStages, type StageView } from '../schema/timeline.ts';
import { autoscaleLines } from './autoscale.ts';
import type { AdmissionView, LastFailure, QueueInfoView, QueueView, QuotaView, WaitEstimateView } from './model.ts';

export type Colour = 'green' | 'red' | 'yellow' | 'cyan' | 'dim' | 'bold';
export type Style = (colour: Colour, text: string) => string;
export const plain: Style = (_c, text) => text;

/** How the terminal is drawn on: `fancy` = a TTY (unicode bar, spinner), else plain ASCII-friendly text. */
export interface Look {
  style: Style;
  fancy: boolean;
}

const STATE_COLOUR: Record<string, Colour> = {
  ready: 'green',
  admitted: 'cyan',
  delivered: 'cyan',
  deleting: 'yellow',
  releasing: 'yellow',
  released: 'dim',
  conflict: 'red',
  queued: 'yellow',
  cancelled: 'dim',
  expired: 'dim',
};
export const styleState = (style: Style, state: string): string => style(STATE_COLOUR[state] ?? 'bold', state);

/** Columns padded to their widest cell; `colour` styles a cell after padding (so ANSI codes do not skew widths). */
export function table(headers: string[], rows: string[][], style: Style, colour: (col: number, cell: string) => Colour | undefined = () => undefined): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[], head: boolean) =>
    cells
      .map((c, i) => {
        const padded = i === cells.length - 1 ? c : c.padEnd(widths[i]!);
        const col = head ? 'bold' : colour(i, c);
        return col ? style(col, padded) : padded;
      })
      .join('  ')
      .trimEnd();
  return [line(headers, true), ...rows.map((r) => line(r, false))].join('\n');
}

/** "3m07s" since `from`, or "-" when unknown. */
export function age(from: string, now: Date): string {
  const ms = elapsedMs(from, now.toISOString());
  return ms === null ? '-' : formatDuration(ms);
}

export function renderList(items: AdmissionView[], now: Date, look: Look): string {
  if (!items.length) return 'no admissions';
  const rows = items.map((a) => [a.id, a.name, a.state, replicasCell(a), age(a.createdAt, now), a.endpoint ?? '-']);
  return table(['ID', 'NAME', 'STATE', 'REPLICAS', 'AGE', 'ENDPOINT'], rows, look.style, (col, cell) => (col === 2 ? (STATE_COLOUR[cell.trim()] ?? undefined) : undefined));
}

/** The list's REPLICAS: "2", or "2 (auto 1..8)" for an admission that autoscales. */
function replicasCell(a: AdmissionView): string {
  const auto = a.spec.autoscale;
  return `${a.spec.replicas}${auto ? ` (auto ${auto.minReplicas}..${auto.maxReplicas})` : ''}`;
}

/** A bar of `used` out of `hard`: "[########............]  42%" (fancy: █ and ░). */
export function bar(used: number, hard: number, width: number, fancy: boolean): string {
  const ratio = hard > 0 ? Math.min(1, Math.max(0, used / hard)) : used > 0 ? 1 : 0;
  const full = Math.round(ratio * width);
  const [on, off] = fancy ? ['█', '░'] : ['#', '.'];
  const pct = hard > 0 ? `${Math.round((used / hard) * 100)}%` : used > 0 ? 'over' : '0%';
  return `[${on.repeat(full)}${off.repeat(width - full)}] ${pct.padStart(4)}`;
}

const UNIT: Record<string, (n: number) => string> = {
  millicores: (n) => (n % 1000 === 0 ? `${n / 1000}` : `${n}m`),
  MiB: (n) => (n >= 1024 && n % 1024 === 0 ? `${n / 1024}Gi` : `${n}Mi`),
  count: (n) => String(n),
};
/** An amount in the unit Kubernetes users write: cpu 1500m / 2, memory 512Mi / 4Gi, GPUs 2. */
export const quantity = (unit: string, n: number): string => (UNIT[unit] ?? String)(n);

export function renderQuota(q: QuotaView, look: Look): string {
  const rows = Object.entries(q.resources).map(([name, r]) => [
    name,
    `${quantity(r.unit, r.reserved)} / ${quantity(r.unit, r.hard)}`,
    bar(r.reserved, r.hard, 20, look.fancy),
    quantity(r.unit, r.active),
    quantity(r.unit, r.releasing),
    quantity(r.unit, r.blocked),
    quantity(r.unit, r.available),
  ]);
  const over = (cell: string) => (/\] +(100%|over|\d{3,}%)$/.test(cell) ? 'red' : /\] +([89]\d)%$/.test(cell) ? 'yellow' : 'green');
  return `tenant ${q.tenant}\n` + table(['RESOURCE', 'USED / HARD', 'USAGE', 'ACTIVE', 'RELEASING', 'BLOCKED', 'AVAILABLE'], rows, look.style, (col, cell) => (col === 2 ? over(cell) : undefined));
}

/** "+1.2s" after admission, or a note when the API reports no time for a reached stage. */
export function stageWhen(v: StageView): string {
  if (v.status === 'unreported') return 'not reported by this API';
  if (v.status === 'pending') return 'pending';
  if (v.stage === 'admitted') return v.at ?? '';
  return v.sinceMs === null ? 'reached (time not reported)' : `+${formatDuration(v.sinceMs)}`;
}

/** One line of a stage: "✔ delivered   +0.8s" (fancy) or "delivered   +0.8s". */
export function stageLine(v: StageView, look: Look): string {
  const mark = v.status === 'done' ? look.style('green', look.fancy ? '✔' : 'ok') : look.style('dim', '-');
  const label = v.stage.padEnd(10);
  const when = stageWhen(v);
  return look.fancy || v.status === 'done' ? `${mark} ${label} ${v.status === 'done' ? when : look.style('dim', when)}` : `${mark} ${label} ${when}`;
}

/** The last pod failure and the last error (with its code, when the API reports one), a line each. */
export function failureLines(f: LastFailure | null | undefined, lastError: string | null | undefined, style: Style, lastErrorCode?: string | null): string[] {
  const lines: string[] = [];
  if (f) lines.push(`  last failure: ${style('red', describeFailure(f))}${f.at ? style('dim', ` (at ${f.at})`) : ''}`);
  if (lastError) lines.push(`  last error:   ${lastErrorCode ? `${lastErrorCode}: ` : ''}${lastError.replace(/\s+/g, ' ').trim()}`);
  return lines;
}

/** `modeldock get`: the admission, its startup timeline and what blocks it, if anything. */
export function renderAdmission(a: AdmissionView, look: Look): string {
  const s = look.style;
  const res = Object.entries(a.spec.resources ?? {}).map(([k, v]) => `${k}=${v}`).join(' ') || '-';
  const lines = [
    `${s('bold', a.name)}  ${a.id}`,
    `  state:     ${styleState(s, a.state)}${a.stateChangedAt ? s('dim', ` since ${a.stateChangedAt}`) : ''}`,
    `  image:     ${a.spec.image}`,
    ...(a.cluster ? [`  cluster:   ${a.cluster}`] : []),
    `  replicas:  ${a.spec.replicas}   resources per replica: ${res}`,
    ...autoscaleLines(a, look),
    `  endpoint:  ${a.endpoint ?? '-'}`,
    ...queueLines(a, look),
    // A queued admission has not started: its timeline begins once it is admitted.
    ...(a.state === 'queued' || a.state === 'cancelled' || a.state === 'expired' ? [] : [`  timeline:`, ...startupStages(a).map((v) => `    ${stageLine(v, look)}`)]),
  ];
  if (a.releaseBlockedSince && a.releaseBlockedReason === 'Finalizers') {
    lines.push(`  ${s('yellow', 'ReleaseBlocked')} since ${a.releaseBlockedSince}: no pod left, the ModelService stays in deletion; finalizers: ${(a.releaseBlockedFinalizers ?? []).join(', ') || '(none)'}`);
  } else if (a.releaseBlockedSince) {
    lines.push(`  ${s('yellow', 'ReleaseBlocked')} since ${a.releaseBlockedSince}: waiting for ${(a.releaseBlockedPods ?? []).join(', ') || 'pods'} to be gone`);
  }
  if (a.deadOutboxRows) lines.push(`  ${s('red', `${a.deadOutboxRows} delivery(ies) failed permanently`)}: an operator must look at the outbox`);
  lines.push(...failureLines(a.lastFailure, a.lastError, s, a.lastErrorCode));
  return lines.join('\n');
}

/** An estimated wait in words: "about 40 s", "about 3 min", "about 2 h". */
export function aboutWait(seconds: number): string {
  if (seconds < 120) return `about ${seconds} s`;
  if (seconds < 2 * 3600) return `about ${Math.round(seconds / 60)} min`;
  return `about ${Math.round(seconds / 3600)} h`;
}

/** An estimate, or why there is none (the API says why when seconds is null). */
export function estimateText(e: WaitEstimateView | null | undefined): string {
  if (!e) return 'no estimate';
  if (e.seconds !== null) return e.seconds === 0 ? 'next to be admitted' : aboutWait(e.seconds);
  return `no estimate: ${e.reason ?? 'not reported'}`;
}

/** A queued admission's place: "position 2 · about 40 s" (or the reason there is no estimate). */
export function queuePlace(q: QueueInfoView | null | undefined): string {
  const position = q?.position ? `position ${q.position}` : 'position not reported';
  return `${position} · ${estimateText(q?.estimate)}`;
}

/** The queue lines of `modeldock get`: the place while queued, else when it waited. */
function queueLines(a: AdmissionView, look: Look): string[] {
  const q = a.queue;
  if (!q) return [];
  const s = look.style;
  if (a.state === 'queued') {
    return [
      `  queue:     ${queuePlace(q)}${q.bypassed ? s('dim', ` (passed by ${q.bypassed} smaller one(s))`) : ''}`,
      `  expires:   ${q.expiresAt ?? 'never (waits until admitted or cancelled)'}`,
    ];
  }
  return [`  queued:    ${q.queuedAt ?? '?'} → ${q.leftAt ?? '?'}${a.state === 'cancelled' || a.state === 'expired' ? ` (${a.state}, never charged)` : ''}`];
}

const AMOUNT_UNITS: Record<string, string> = { cpu: 'millicores', memory: 'MiB' };
/** Ledger amounts as a tenant writes them: "cpu=2 memory=4Gi nvidia.com/gpu=1" (zero ones left out). */
export function amountsText(amounts: Record<string, number>): string {
  const parts = Object.entries(amounts)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name}=${quantity(AMOUNT_UNITS[name] ?? 'count', n)}`);
  return parts.join(' ') || '-';
}

/** `modeldock queue`: the tenant's queued admissions, the next to be admitted first. */
export function renderQueue(v: QueueView, look: Look): string {
  if (v.queued === 0 && v.items.length === 0) return `tenant ${v.tenant}: no queued admissions`;
  const more = v.queued > v.items.length ? ` (the first ${v.items.length} shown)` : '';
  const rows = v.items.map((i) => [String(i.position), i.id, amountsText(i.amounts), estimateText(i.estimate)]);
  return `tenant ${v.tenant}: ${v.queued} queued${more}\n` + table(['POSITION', 'ID', 'AMOUNTS', 'ESTIMATE'], rows, look.style);
}

export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The live line on a TTY: "⠹ waiting for scheduled … 4.2s". */
export function spinnerLine(tick: number, waitingFor: string, elapsed: number, note: string | undefined, style: Style): string {
  const frame = style('cyan', SPINNER[tick % SPINNER.length]!);
  return `${frame} waiting for ${waitingFor} … ${formatDuration(elapsed)}${note ? style('dim', `  (${note})`) : ''}`;
}
