// One backoff rule for the work queue, the informers and the outbox: base·2^exponent, capped,
// with "equal jitter" (half fixed, half random) so retries of many keys spread out.
export function jitteredBackoffMs(exponent: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, exponent), 40));
  return full / 2 + (random() * full) / 2;
}
