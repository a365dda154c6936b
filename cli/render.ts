// Text rendering of admissions, lists, quota and startup stages. Pure: every function takes the
// data and a Style (colours on or off, decided once by the caller) and returns text.
import { describeFailure, elapsedMs, formatDuration, startupStages, type StageView } from '../schema/timeline.ts';
import type { AdmissionView, LastFailure, QuotaView } from './model.ts';

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
  const rows = items.map((a) => [a.id, a.name, a.state, String(a.spec.replicas), age(a.createdAt, now), a.endpoint ?? '-']);
  return table(['ID', 'NAME', 'STATE', 'REPLICAS', 'AGE', 'ENDPOINT'], rows, look.style, (col, cell) => (col === 2 ? (STATE_COLOUR[cell.trim()] ?? undefined) : undefined));
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
    `  replicas:  ${a.spec.replicas}   resources per replica: ${res}`,
    `  endpoint:  ${a.endpoint ?? '-'}`,
    `  timeline:`,
    ...startupStages(a).map((v) => `    ${stageLine(v, look)}`),
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

export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The live line on a TTY: "⠹ waiting for scheduled … 4.2s". */
export function spinnerLine(tick: number, waitingFor: string, elapsed: number, note: string | undefined, style: Style): string {
  const frame = style('cyan', SPINNER[tick % SPINNER.length]!);
  return `${frame} waiting for ${waitingFor} … ${formatDuration(elapsed)}${note ? style('dim', `  (${note})`) : ''}`;
}
