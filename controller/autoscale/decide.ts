// The autoscaler's decision for one admission: a PURE function of (spec, current charged replicas,
// one observation, the memory of past ticks) → (replicas to ask the ledger for, new memory). No
// I/O, no clock (`now` is given, in ms). The controller scrapes the READY pods every ~2 s, calls
// decide(), charges any change through the ledger and, once it committed, calls recordChange().
// Table-tested in decide.test.ts. The steps (Knative KPA: knative.dev/serving
// pkg/autoscaler/scaling/autoscaler.go; Kubernetes HPA: pkg/controller/podautoscaler/horizontal.go):
//  1. Samples: each load reading {at, total, readyPods} is kept for the stable window. Stable
//     average = mean `total` over it; panic average = mean over the panic window (panicWindowPercent
//     % of it, at least the latest sample). KPA averages concurrency per window; here `total` is the
//     whole admission's load (queue + busy summed over its ready pods).
//  2. desiredStable = ⌈stableAvg / target⌉, desiredPanic = ⌈panicAvg / target⌉ (0 load → 0 → min).
//  3. Panic (KPA): over the threshold when panicAvg / (target × readyPods) >= panicThreshold (the
//     ratio before rounding up: exactly 2× panics, 1.99× does not). Over it enters or refreshes the
//     panic; the panic ends once not over it for a whole stable window. While panicking:
//     replicas = max(current, desiredPanic, the highest desiredPanic since it began); never down.
//  4. Outside panic, HPA tolerance: |stableAvg / (target × current) − 1| <= tolerance → no change
//     (the recommendation is then current); otherwise the recommendation is desiredStable.
//  5. HPA scale-down stabilization: recommendations are kept with their time; a scale-down goes only
//     to the highest one of the last scaleDownStabilizationSeconds; a scale-up applies at once. No
//     scale-down before the samples cover a whole stable window (empty memory after a restart or a
//     leader change, or readings lost for a whole window): 'stabilizing'.
//  6. Clamp to [minReplicas, maxReplicas].
//  7. Rate limit: with >= maxChangesPerMinute changes in the last 60 s, no change ('rate-limited').
//  8. Metrics unavailable: no sample; hold the replicas (never a silent fall to min). With
//     metricsFallback, after afterSeconds of it go to fallback.replicas (the rate limit applies).
//  9. current outside [min, max] (the spec was just PATCHed): into range at once, whatever 5–8 say.
import { type AutoscaleSpec, clampReplicas } from '../../schema/autoscale.ts';

export interface LoadSample { at: number; total: number; readyPods: number }
/** `lastOver` is KPA's panicTime (refreshed on every tick over the threshold); `maxDesired` KPA's maxPanicPods. */
export interface PanicState { since: number; lastOver: number; maxDesired: number }
export interface AutoscaleMemory {
  samples: LoadSample[];
  /** When the current unbroken run of samples began (null: none); no scale-down before it spans the stable window. */
  dataSince: number | null;
  panic: PanicState | null;
  recommendations: { at: number; replicas: number }[];
  /** When the caller committed changes (recordChange), last 60 s. */
  changes: number[];
  unavailableSince: number | null;
}
export const emptyMemory = (): AutoscaleMemory => ({ samples: [], dataSince: null, panic: null, recommendations: [], changes: [], unavailableSince: null });

export type Observation = { kind: 'load'; total: number; readyPods: number } | { kind: 'unavailable'; reason: string };
export interface DecideInput { now: number; spec: AutoscaleSpec; current: number; observation: Observation; memory: AutoscaleMemory }
export interface Decide {
  /** Replicas to ask the ledger for; === current means no change. */
  replicas: number;
  /** What the load asks for now (panic or stable, whichever mode), clamped to min..max; null without a reading. */
  desired: number | null;
  /** The averaged load the decision used (panic or stable average), null if none. */
  load: number | null;
  panic: boolean;
  reason: string;
  message: string;
  metricsUnavailableSince: number | null;
  memory: AutoscaleMemory;
}

const MINUTE_MS = 60_000;
/** Floating-point slack: a mean of 30.000000000000004 for target 10 asks 3, not 4. */
const EPS = 1e-9;
const ceilDiv = (load: number, target: number): number => Math.max(0, Math.ceil(load / target - EPS));
const mean = (xs: LoadSample[]): number => xs.reduce((sum, s) => sum + s.total, 0) / xs.length;
const fmt = (x: number): string => String(Math.round(x * 100) / 100);

export function decide({ now, spec, current, observation, memory }: DecideInput): Decide {
  const changes = memory.changes.filter((at) => at > now - MINUTE_MS);
  const d = observation.kind === 'load' ? onLoad(now, spec, current, observation, memory) : onUnavailable(now, spec, current, observation.reason, memory);
  const out: Decide = { ...d, memory: { ...d.memory, changes }, metricsUnavailableSince: d.memory.unavailableSince };
  const inRange = clampReplicas(spec, current);
  if (inRange !== current) {
    return { ...out, replicas: inRange, reason: 'out-of-range', message: `${current} replicas is outside ${spec.minReplicas}..${spec.maxReplicas}: moving to ${inRange} at once` };
  }
  if (out.replicas !== current && changes.length >= spec.maxChangesPerMinute) {
    const msg = `${out.message}; rate-limited to ${spec.maxChangesPerMinute} changes a minute, holding ${current}`;
    return { ...out, replicas: current, reason: 'rate-limited', message: msg };
  }
  return out;
}

/** After the caller committed a change to the ledger at `now` (counts toward maxChangesPerMinute). */
export function recordChange(memory: AutoscaleMemory, now: number): AutoscaleMemory {
  return { ...memory, changes: [...memory.changes.filter((at) => at > now - MINUTE_MS), now] };
}

type Draft = Omit<Decide, 'metricsUnavailableSince'>;

function onLoad(now: number, spec: AutoscaleSpec, current: number, obs: { total: number; readyPods: number }, memory: AutoscaleMemory): Draft {
  const windowMs = spec.stableWindowSeconds * 1000;
  const target = spec.targetQueuePerReplica;
  const kept = memory.samples.filter((s) => s.at > now - windowMs && s.at <= now);
  const dataSince = kept.length === 0 || memory.dataSince === null ? now : memory.dataSince;
  const samples = [...kept, { at: now, total: obs.total, readyPods: obs.readyPods }];
  const panicMs = (windowMs * spec.panicWindowPercent) / 100;
  const stableAvg = mean(samples);
  const panicAvg = mean(samples.filter((s) => s.at > now - panicMs)); // always holds the latest sample
  const desiredStable = clampReplicas(spec, ceilDiv(stableAvg, target));
  const desiredPanic = clampReplicas(spec, ceilDiv(panicAvg, target));

  const over = panicAvg / (target * Math.max(1, obs.readyPods)) >= spec.panicThreshold - EPS;
  let panic = memory.panic;
  if (over) panic = { since: panic?.since ?? now, lastOver: now, maxDesired: Math.max(panic?.maxDesired ?? 0, desiredPanic) };
  else if (panic !== null && now - panic.lastOver >= windowMs) panic = null;
  else if (panic !== null) panic = { ...panic, maxDesired: Math.max(panic.maxDesired, desiredPanic) };

  const stabMs = spec.scaleDownStabilizationSeconds * 1000;
  const recent = memory.recommendations.filter((r) => r.at > now - stabMs && r.at <= now);
  const asks = (avg: number, secs: number, n: number) => `load ${fmt(avg)} over ${fmt(secs)} s for target ${fmt(target)}/replica asks ${n} replicas`;
  let replicas = current;
  let recommendation: number;
  let reason: string;
  let message: string;
  if (panic !== null) {
    const base = `panic: ${asks(panicAvg, panicMs / 1000, desiredPanic)}`;
    recommendation = clampReplicas(spec, Math.max(current, desiredPanic, panic.maxDesired));
    replicas = recommendation;
    if (replicas > current) [reason, message] = ['panic-scale-up', `${base} (>= ${fmt(spec.panicThreshold)}× the ${obs.readyPods} ready pods): scaling up to ${replicas}`];
    else if (desiredStable < current || desiredPanic < current) [reason, message] = ['panic-hold', `${base}; no scale-down while panicking, holding ${current}`];
    else [reason, message] = ['steady', `${base}, as many as now`];
  } else {
    const base = asks(stableAvg, spec.stableWindowSeconds, desiredStable);
    const ratio = stableAvg / (target * current);
    if (Math.abs(ratio - 1) <= spec.tolerance + EPS) {
      recommendation = clampReplicas(spec, current);
      [reason, message] = ['within-tolerance', `load ${fmt(stableAvg)} is ${fmt(ratio * 100)} % of target ${fmt(target)} × ${current} replicas, within ±${fmt(spec.tolerance * 100)} %`];
    } else {
      recommendation = desiredStable;
      const windowMax = Math.max(desiredStable, ...recent.map((r) => r.replicas));
      if (desiredStable > current) [replicas, reason, message] = [desiredStable, 'scale-up', `${base}: scaling up from ${current}`];
      else if (desiredStable === current) [reason, message] = ['steady', `${base}, as many as now`];
      else if (now - dataSince < windowMs) [reason, message] = ['stabilizing', `${base}; no scale-down before ${spec.stableWindowSeconds} s of readings (${fmt((now - dataSince) / 1000)} s so far)`];
      else if (windowMax >= current) [reason, message] = ['stabilizing', `${base}; holding ${current}, the highest recommendation of the last ${spec.scaleDownStabilizationSeconds} s`];
      else [replicas, reason, message] = [windowMax, 'scale-down', `${base}; scaling down to ${windowMax}, the highest recommendation of the last ${spec.scaleDownStabilizationSeconds} s`];
    }
  }
  const next: AutoscaleMemory = { ...memory, samples, dataSince, panic, recommendations: [...recent, { at: now, replicas: recommendation }], unavailableSince: null };
  return { replicas, desired: panic ? desiredPanic : desiredStable, load: panic ? panicAvg : stableAvg, panic: panic !== null, reason, message, memory: next };
}

function onUnavailable(now: number, spec: AutoscaleSpec, current: number, why: string, memory: AutoscaleMemory): Draft {
  const since = memory.unavailableSince ?? now;
  const panic = memory.panic !== null && now - memory.panic.lastOver < spec.stableWindowSeconds * 1000 ? memory.panic : null;
  const next: AutoscaleMemory = { ...memory, panic, unavailableSince: since };
  const lost = `metrics unavailable for ${fmt((now - since) / 1000)} s (${why})`;
  const fallback = spec.metricsFallback;
  const common = { desired: null, load: null, panic: panic !== null, memory: next };
  if (fallback !== null && now - since >= fallback.afterSeconds * 1000) {
    const replicas = clampReplicas(spec, fallback.replicas);
    return { ...common, replicas, reason: 'metrics-fallback', message: `${lost}: metricsFallback after ${fallback.afterSeconds} s asks ${replicas} replicas` };
  }
  return { ...common, replicas: current, reason: 'metrics-unavailable', message: `${lost}: holding ${current} replicas` };
}
