// How the CLI shows an autoscaled admission (spec.autoscale): its range and target, the replicas
// the load asks for against those set and charged, the autoscaler's last change and why, and its
// conditions (QuotaLimited, MetricsUnavailable, Panic) — in `get`, and as lines during a --wait
// each time they change. Pure. The API reports no count of ready pods: readiness is the state and
// the startup timeline, as for any admission.
import type { AdmissionView, AutoscaleSpecView, AutoscaleStatusView } from './model.ts';
import type { Colour, Look } from './render.ts';

const CONDITION_COLOUR: Record<string, Colour> = { QuotaLimited: 'yellow', MetricsUnavailable: 'yellow', Panic: 'red' };
const conditionColour = (type: string): Colour => CONDITION_COLOUR[type] ?? 'bold';

/** A number as the autoscaler reports it: at most two decimals ("35.25", "10"). */
const num = (n: number): string => String(Math.round(n * 100) / 100);

/** "1..8 replicas, target 10 per replica". */
export function autoscaleRange(s: AutoscaleSpecView): string {
  return `${s.minReplicas}..${s.maxReplicas} replicas, target ${num(s.targetQueuePerReplica)} per replica`;
}

/** The replicas set now, or the change of them in flight: "3", "3 → 4 (applying)". */
function replicasNow(a: AdmissionView): string {
  const p = a.pendingChange;
  if (p) return `${p.fromReplicas} → ${p.toReplicas} (${p.phase})`;
  return String(a.replicas ?? a.spec.replicas);
}

/** "desired 4 (load 35.2) · replicas 3 · charged 3 · ready 3": what the load asks for, what is set, what the quota covers, what carries the load. */
export function autoscaleCounts(a: AdmissionView): string {
  const st = a.autoscaleStatus;
  const desired = st?.desiredReplicas ?? null;
  const load = st?.load ?? null;
  const asked = desired === null ? 'desired not known yet (no load reading)' : `desired ${desired}${load === null ? '' : ` (load ${num(load)})`}`;
  const ready = st?.readyReplicas === undefined ? '' : ` · ready ${st.readyReplicas}`;
  return `${asked} · replicas ${replicasNow(a)} · charged ${a.chargedReplicas ?? '?'}${ready}`;
}

type Decision = NonNullable<AutoscaleStatusView['lastDecision']>;

/** "2 → 3 at <when>: <reason>", with what the load asked for when the quota allowed less. */
export function decisionText(d: Decision): string {
  const less = d.desiredReplicas !== undefined && d.desiredReplicas !== d.toReplicas ? ` (asked for ${d.desiredReplicas})` : '';
  return `${d.fromReplicas} → ${d.toReplicas}${less} at ${d.at}: ${d.reason}`;
}

type Condition = NonNullable<AutoscaleStatusView['conditions']>[number];

/** "QuotaLimited since <when>: <message>". */
export function conditionText(c: Condition, look: Look): string {
  return `${look.style(conditionColour(c.type), c.type)}${c.since ? ` since ${c.since}` : ''}${c.message ? `: ${c.message}` : ''}`;
}

/** The autoscaling lines of `modeldock get` (none for an admission that does not autoscale). */
export function autoscaleLines(a: AdmissionView, look: Look): string[] {
  const spec = a.spec.autoscale;
  if (!spec) return [];
  const st = a.autoscaleStatus;
  const lines = [`  autoscale: ${autoscaleRange(spec)}${st?.panic ? ` ${look.style('red', '(panic)')}` : ''}`, `    ${autoscaleCounts(a)}`];
  if (!st) return [...lines, `    ${look.style('dim', 'no decision yet: the autoscaler has not read the load')}`];
  lines.push(`    last change: ${st.lastDecision ? decisionText(st.lastDecision) : look.style('dim', 'none yet')}`);
  for (const c of st.conditions ?? []) lines.push(`    ${conditionText(c, look)}`);
  return lines;
}

/**
 * The autoscaler's work as a --wait follows an admission: a line for each new last change, each
 * condition that begins (with its message) and each that clears. Nothing for one that does not
 * autoscale.
 */
export class AutoscaleProgress {
  private lastDecision = '';
  /** Condition type → since, as last printed. */
  private conditions = new Map<string, string>();
  private readonly look: Look;
  constructor(look: Look) {
    this.look = look;
  }

  update(a: AdmissionView): string[] {
    if (!a.spec.autoscale) return [];
    const s = this.look.style;
    const out: string[] = [];
    const st = a.autoscaleStatus;
    const d = st?.lastDecision;
    const key = d ? `${d.at} ${d.fromReplicas} ${d.toReplicas}` : '';
    if (d && key !== this.lastDecision) out.push(`${s('cyan', 'autoscaled'.padEnd(18))} ${decisionText(d)}`);
    this.lastDecision = key;
    const now = new Map((st?.conditions ?? []).map((c) => [c.type, c.since ?? '']));
    for (const c of st?.conditions ?? []) {
      if (this.conditions.get(c.type) !== (c.since ?? '')) out.push(`${s(conditionColour(c.type), c.type.padEnd(18))} ${c.message ?? c.reason ?? ''}${c.since ? s('dim', ` (since ${c.since})`) : ''}`);
    }
    for (const type of this.conditions.keys()) if (!now.has(type)) out.push(`${s('green', type.padEnd(18))} cleared`);
    this.conditions = now;
    return out;
  }
}
