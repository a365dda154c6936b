import { describe, expect, it } from 'vitest';
import { type AutoscaleSpec, autoscaleSpecSchema } from '../../schema/autoscale.ts';
import { type AutoscaleMemory, type Decide, decide, emptyMemory, type Observation, recordChange } from './decide.ts';

const S = 1000;
/** Target 10/replica, 1..10 replicas, the Knative/HPA defaults, but no rate limit unless a test sets one. */
const spec = (over: Partial<AutoscaleSpec> = {}): AutoscaleSpec =>
  autoscaleSpecSchema(100).parse({ minReplicas: 1, maxReplicas: 10, targetQueuePerReplica: 10, maxChangesPerMinute: 60, ...over });
const load = (total: number, readyPods: number): Observation => ({ kind: 'load', total, readyPods });
const unavailable: Observation = { kind: 'unavailable', reason: 'GET /metrics timed out' };

interface State { current: number; memory: AutoscaleMemory }
type Step = Decide & { t: number; before: number };
/**
 * The controller's side, one tick every 2 s from `fromS` to `toS` (seconds, inclusive): every ready
 * pod is the current replicas (pods start at once), a change is applied and recorded (recordChange).
 */
function simulate(s: AutoscaleSpec, state: State, fromS: number, toS: number, total: (tS: number) => number | 'unavailable'): Step[] {
  const steps: Step[] = [];
  for (let t = fromS; t <= toS; t += 2) {
    const v = total(t);
    const d = decide({ now: t * S, spec: s, current: state.current, observation: v === 'unavailable' ? unavailable : load(v, state.current), memory: state.memory });
    steps.push({ ...d, t, before: state.current });
    state.memory = d.memory;
    if (d.replicas !== state.current) [state.current, state.memory] = [d.replicas, recordChange(d.memory, t * S)];
  }
  return steps;
}
/** A memory that has seen `total` at `ready` pods every 2 s for a whole stable window ending at `endS`, nothing else. */
function steady(ready: number, total: number, endS: number, windowS = 60): AutoscaleMemory {
  const samples = Array.from({ length: windowS / 2 + 1 }, (_, i) => ({ at: (endS - windowS + 2 * i) * S, total, readyPods: ready }));
  return { ...emptyMemory(), samples, dataSince: (endS - windowS) * S };
}
const at = (steps: Step[], t: number): Step => steps.find((x) => x.t === t)!;

describe('decide: the load asks ⌈average / target⌉ replicas', () => {
  it('a ramp 0 → 40 with target 10 ends at 4 replicas, never above', () => {
    const state = { current: 1, memory: emptyMemory() };
    const steps = simulate(spec(), state, 0, 240, (t) => Math.min(40, t / 3)); // 40 at t = 120 s, held 2 minutes
    expect(state.current).toBe(4);
    expect(at(steps, 240)).toMatchObject({ desired: 4, load: 40, panic: false, replicas: 4 });
    expect(Math.max(...steps.map((x) => x.replicas))).toBe(4);
    expect(at(steps, 240).message).toBe('load 40 is 100 % of target 10 × 4 replicas, within ±10 %');
  });

  it.each([
    [0, 1, 'min: no load still keeps minReplicas'],
    [40, 4, 'exactly 4 targets'],
    [41, 5, 'a little over rounds up'],
    [31, 4, 'rounds up'],
    [500, 10, 'clamped to maxReplicas'],
  ])('a steady load of %d asks %d (%s)', (total, desired) => {
    const s = spec({ tolerance: 0 });
    const d = decide({ now: 200 * S, spec: s, current: 4, observation: load(total, 4), memory: steady(4, total, 198) });
    expect(d.desired).toBe(desired);
    expect(d.load).toBe(total);
  });

  it('floating point does not round up a whole number of replicas: an average of 2.7 for target 0.3 asks 9', () => {
    const memory = steady(9, 2.7, 98); // 2.7 / 0.3 is 9.000000000000002
    const d = decide({ now: 100 * S, spec: spec({ targetQueuePerReplica: 0.3, maxReplicas: 20, tolerance: 0 }), current: 2, observation: load(2.7, 9), memory });
    expect(d).toMatchObject({ desired: 9, replicas: 9, panic: false });
  });
});

describe('decide: HPA tolerance', () => {
  it.each([43, 44, 36])('load %d on 4 replicas, target 10, tolerance 0.1 → 4 at every tick (44 is 1.1×, 36 is 0.9×)', (total) => {
    const steps = simulate(spec(), { current: 4, memory: emptyMemory() }, 0, 120, () => total);
    for (const x of steps) expect(x, `t=${x.t}`).toMatchObject({ replicas: 4, desired: Math.ceil(total / 10), reason: 'within-tolerance' });
  });

  it('load 45 on 4 replicas (1.125×) scales up to 5 at once', () => {
    expect(decide({ now: 0, spec: spec(), current: 4, observation: load(45, 4), memory: emptyMemory() })).toMatchObject({ replicas: 5, reason: 'scale-up' });
  });

  it('tolerance 0: a load of 41 on 4 replicas scales up to 5', () => {
    const d = decide({ now: 0, spec: spec({ tolerance: 0 }), current: 4, observation: load(41, 4), memory: emptyMemory() });
    expect(d).toMatchObject({ replicas: 5, reason: 'scale-up' });
  });
});

describe('decide: HPA scale-down stabilization', () => {
  it('goes down only to the highest recommendation of the window', () => {
    const s = spec({ scaleDownStabilizationSeconds: 60 });
    const memory = { ...steady(8, 20, 98), recommendations: [{ at: 40 * S, replicas: 9 }, { at: 50 * S, replicas: 6 }, { at: 90 * S, replicas: 4 }] };
    const d = decide({ now: 100 * S, spec: s, current: 8, observation: load(20, 8), memory });
    expect(d).toMatchObject({ desired: 2, replicas: 6, reason: 'scale-down' }); // 9 at 40 s is out of the window (40, 100]
  });

  it('a falling load waits for the window, then steps down through the window max to what the load asks', () => {
    const s = spec({ stableWindowSeconds: 6, scaleDownStabilizationSeconds: 60 });
    const state = { current: 8, memory: emptyMemory() };
    // 80 until 20 s, 50 until 40 s, then 20. Recommendations: 8 until 20 s, 7 at 22, 6 at 24, 5 up to 40, 4 at 42, 3 at 44, 2 from 46.
    const steps = simulate(s, state, 0, 120, (t) => (t <= 20 ? 80 : t <= 40 ? 50 : 20));
    for (const x of steps.filter((x) => x.t < 80)) expect(x.replicas, `t=${x.t}`).toBe(8);
    expect(at(steps, 78)).toMatchObject({ desired: 2, reason: 'stabilizing' });
    expect(at(steps, 80)).toMatchObject({ replicas: 7, reason: 'scale-down' }); // the 8 of 20 s left the window
    expect(at(steps, 84).replicas).toBe(5);
    expect(at(steps, 98).replicas).toBe(5);
    expect(at(steps, 100).replicas).toBe(4);
    expect(at(steps, 104).replicas).toBe(2);
    expect(state.current).toBe(2);
  });

  it('a scale-up needs no window, whatever the recommendations of the window', () => {
    const memory = { ...steady(2, 25, 98), recommendations: [{ at: 90 * S, replicas: 2 }] };
    const d = decide({ now: 100 * S, spec: spec(), current: 2, observation: load(25, 2), memory });
    expect(d).toMatchObject({ desired: 3, replicas: 3, reason: 'scale-up', panic: false });
  });
});

describe('decide: after a restart (empty memory)', () => {
  it('scales up at once', () => {
    expect(decide({ now: 0, spec: spec(), current: 2, observation: load(35, 2), memory: emptyMemory() })).toMatchObject({ replicas: 4, reason: 'scale-up' });
  });

  it('never scales down before the samples span a whole stable window', () => {
    const state = { current: 5, memory: emptyMemory() };
    const steps = simulate(spec(), state, 1000, 1060, () => 10);
    for (const x of steps.filter((x) => x.t < 1060)) expect(x, `t=${x.t}`).toMatchObject({ desired: 1, replicas: 5, reason: 'stabilizing' });
    expect(at(steps, 1060)).toMatchObject({ replicas: 1, reason: 'scale-down' });
  });

  it('readings lost for a whole window count as a restart', () => {
    const s = spec({ scaleDownStabilizationSeconds: 0 });
    const memory = steady(5, 10, 100);
    expect(decide({ now: 102 * S, spec: s, current: 5, observation: load(10, 5), memory }).reason).toBe('scale-down');
    const after = decide({ now: 200 * S, spec: s, current: 5, observation: load(10, 5), memory });
    expect(after).toMatchObject({ replicas: 5, reason: 'stabilizing' });
  });
});

describe('decide: Knative panic', () => {
  it.each([
    [2, 10, 40, 2, true],
    [2, 10, 39.9, 2, false],
    [3, 10, 60, 2, true],
    [3, 10, 59, 2, false],
    [2, 10, 60, 3, true],
    [2, 10, 59, 3, false],
    [3, 0.1, 0.6, 2, true], // 0.6 / (0.1 × 3) is 1.9999999999999998 in floating point
  ])('%d ready pods, target %d, load %d, threshold %d → panic %s', (ready, target, total, panicThreshold, panic) => {
    const d = decide({ now: 0, spec: spec({ targetQueuePerReplica: target, panicThreshold }), current: ready, observation: load(total, ready), memory: emptyMemory() });
    expect(d.panic).toBe(panic);
    expect(d.reason).toBe(panic ? 'panic-scale-up' : 'scale-up');
    expect(d.memory.panic !== null).toBe(panic);
  });

  it('averages the panic window only: a 6 s burst after a calm minute', () => {
    const s = spec();
    const d = decide({ now: 100 * S, spec: s, current: 2, observation: load(100, 2), memory: steady(2, 20, 98) });
    expect(d).toMatchObject({ panic: true, load: (20 * 2 + 100) / 3, desired: 5, replicas: 5, reason: 'panic-scale-up' }); // samples at 96, 98, 100
  });

  it('never scales down while panicking, and exits after a stable window without the threshold', () => {
    const s = spec({ scaleDownStabilizationSeconds: 0 });
    const state = { current: 2, memory: steady(2, 20, 98) };
    const steps = simulate(s, state, 100, 200, (t) => (t === 100 ? 200 : 10)); // panic window (94, 100]: 20, 20, 200
    expect(at(steps, 100)).toMatchObject({ panic: true, load: 80, replicas: 8, reason: 'panic-scale-up' });
    for (const x of steps.filter((x) => x.t > 100 && x.t < 160)) expect(x, `t=${x.t}`).toMatchObject({ panic: true, replicas: 8, reason: 'panic-hold' });
    expect(at(steps, 160)).toMatchObject({ panic: false, desired: 1, replicas: 1, reason: 'scale-down' });
    expect(state.memory.panic).toBeNull();
  });

  it('panicking while pods are still starting never goes below the current replicas', () => {
    // 8 charged replicas, 2 of them ready, load 40: 2× the ready pods asks 4.
    const d = decide({ now: 0, spec: spec(), current: 8, observation: load(40, 2), memory: emptyMemory() });
    expect(d).toMatchObject({ panic: true, desired: 4, replicas: 8, reason: 'panic-hold' });
  });

  it('another tick over the threshold refreshes the panic', () => {
    const s = spec({ scaleDownStabilizationSeconds: 0 });
    const state = { current: 2, memory: steady(2, 20, 98) };
    // At 130 s the panic window holds 10, 10, 500: 173 on 8 pods is over 2× (160).
    const steps = simulate(s, state, 100, 220, (t) => (t === 100 ? 200 : t === 130 ? 500 : 10));
    expect(at(steps, 130)).toMatchObject({ panic: true, replicas: 10, reason: 'panic-scale-up' });
    expect(at(steps, 188)).toMatchObject({ panic: true, replicas: 10, reason: 'panic-hold' });
    expect(at(steps, 190)).toMatchObject({ panic: false, replicas: 1, reason: 'scale-down' });
    expect(state.memory.panic).toBeNull();
  });
});

describe('decide: rate limit', () => {
  const withChanges = (...ago: number[]) => ago.reduce((m, a) => recordChange(m, 100 * S - a * S), emptyMemory());
  it.each([
    [[50, 40, 30], 5, 'scale-up'],
    [[50, 40, 30, 20], 2, 'rate-limited'],
    [[60, 40, 30, 20], 5, 'scale-up'], // the change of exactly 60 s ago no longer counts
  ])('changes %j s ago, max 4 a minute → %d (%s)', (ago, replicas, reason) => {
    const d = decide({ now: 100 * S, spec: spec({ maxChangesPerMinute: 4 }), current: 2, observation: load(45, 3), memory: withChanges(...ago) });
    expect(d).toMatchObject({ replicas, reason, desired: 5 });
  });

  it('recordChange keeps only the last minute and does not touch its input', () => {
    const m = withChanges(90, 10);
    expect(m.changes).toEqual([90 * S]); // recorded at 10 s, then at 90 s: the first is more than a minute old
    const next = recordChange(m, 200 * S);
    expect(next.changes).toEqual([200 * S]);
    expect(m.changes).toEqual([90 * S]);
  });
});

describe('decide: metrics unavailable', () => {
  it('holds the replicas (never min) and remembers since when; a reading clears it', () => {
    const s = spec();
    const state = { current: 6, memory: steady(6, 60, 98) };
    const steps = simulate(s, state, 100, 700, (t) => (t < 700 ? 'unavailable' : 60));
    for (const x of steps.slice(0, -1)) expect(x, `t=${x.t}`).toMatchObject({ replicas: 6, reason: 'metrics-unavailable', desired: null, load: null, metricsUnavailableSince: 100 * S });
    expect(steps.at(-1)).toMatchObject({ replicas: 6, metricsUnavailableSince: null, desired: 6 });
  });

  it('with empty memory it holds too', () => {
    expect(decide({ now: 0, spec: spec({ minReplicas: 1 }), current: 7, observation: unavailable, memory: emptyMemory() })).toMatchObject({ replicas: 7, reason: 'metrics-unavailable' });
  });

  it('metricsFallback applies after afterSeconds, under the rate limit', () => {
    const s = spec({ metricsFallback: { replicas: 3, afterSeconds: 30 } });
    const state = { current: 6, memory: emptyMemory() };
    const steps = simulate(s, state, 100, 140, () => 'unavailable');
    expect(at(steps, 128)).toMatchObject({ replicas: 6, reason: 'metrics-unavailable' });
    expect(at(steps, 130)).toMatchObject({ replicas: 3, reason: 'metrics-fallback' });
    expect(state.current).toBe(3);
    const busy = [1, 2, 3, 4].reduce<AutoscaleMemory>((m, i) => recordChange(m, 100 * S + i * S), { ...emptyMemory(), unavailableSince: 100 * S });
    const limited = decide({ now: 130 * S, spec: { ...s, maxChangesPerMinute: 4 }, current: 6, observation: unavailable, memory: busy });
    expect(limited).toMatchObject({ replicas: 6, reason: 'rate-limited' });
  });
});

describe('decide: current outside min..max (a PATCH of the spec)', () => {
  const full = [1, 2, 3, 4].reduce((m, i) => recordChange(m, i * S), emptyMemory());
  it.each<[string, number, Partial<AutoscaleSpec>, Observation, number]>([
    ['above max, load asks less', 12, {}, load(10, 12), 10],
    ['below min, load asks less', 1, { minReplicas: 3 }, load(0, 1), 3],
    ['above max, metrics unavailable', 12, {}, unavailable, 10],
    ['below min, panicking', 1, { minReplicas: 3 }, load(100, 1), 3],
  ])('%s → at once, despite empty windows and a full rate limit', (_name, current, over, observation, replicas) => {
    const d = decide({ now: 10 * S, spec: spec({ ...over, maxChangesPerMinute: 4 }), current, observation, memory: full });
    expect(d).toMatchObject({ replicas, reason: 'out-of-range' });
  });
});

describe('decide: purity', () => {
  const deepFreeze = <T>(x: T): T => {
    if (x !== null && typeof x === 'object') for (const v of Object.values(x)) deepFreeze(v);
    return Object.freeze(x);
  };
  it.each<[string, Observation, number]>([
    ['load', load(20, 2), 100],
    ['panic', load(200, 2), 100],
    ['scale-down', load(2, 2), 100],
    ['unavailable', unavailable, 100],
    ['long after', load(20, 2), 900],
  ])('%s: the input memory and spec are not mutated', (_name, observation, t) => {
    const s = spec({ scaleDownStabilizationSeconds: 0 });
    const memory = recordChange({ ...steady(2, 20, 98), panic: { since: 90 * S, lastOver: 90 * S, maxDesired: 3 } }, 95 * S);
    const before = structuredClone(memory);
    const d = decide({ now: t * S, spec: deepFreeze(s), current: 2, observation, memory: deepFreeze(memory) });
    expect(memory).toEqual(before);
    expect(d.memory).not.toBe(memory);
  });
});
