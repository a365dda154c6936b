// Pure numbers for the benchmarks: percentiles (nearest rank), rates, ratios, and the one-line
// formats every benchmark prints. No I/O.

/** Nearest-rank percentile of `values` (0 < p ≤ 100); NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** `a / b`, NaN when b is 0 or not finite. */
export function ratio(a: number, b: number): number {
  return b === 0 || !Number.isFinite(b) || !Number.isFinite(a) ? Number.NaN : a / b;
}

/** A number for a summary line: 3 significant digits, no exponent for ordinary sizes. */
export function fmt(n: number, digits = 3): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return '0';
  const abs = Math.abs(n);
  if (abs >= 1000) return n.toFixed(0);
  return Number(n.toPrecision(digits)).toString();
}

/** `ok` / `MISS` against a goal (≥ goal when higher is better). */
export function verdict(value: number, goal: number, higherIsBetter: boolean): 'ok' | 'MISS' {
  if (!Number.isFinite(value)) return 'MISS';
  return (higherIsBetter ? value >= goal : value <= goal) ? 'ok' : 'MISS';
}

export interface LatencySummary {
  n: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Throughput over the wall time of a run and latency percentiles of its operations (ms). */
export function summarize(latenciesMs: readonly number[], wallMs: number): LatencySummary {
  return { n: latenciesMs.length, perSecond: wallMs > 0 ? (latenciesMs.length * 1000) / wallMs : Number.NaN, p50: median(latenciesMs), p99: percentile(latenciesMs, 99) };
}

export const describe = (s: LatencySummary): string => `${fmt(s.perSecond)}/s p50 ${fmt(s.p50)} ms p99 ${fmt(s.p99)} ms (n=${s.n})`;
