import { describe, expect, it } from 'vitest';
import { autoscaleIdentity, autoscalePatch, autoscaleSpecSchema, clampReplicas } from './autoscale.ts';

const spec = autoscaleSpecSchema(16).parse({ minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 });

describe('autoscaleSpecSchema', () => {
  it('fills the defaults and bounds every field', () => {
    expect(spec).toEqual({
      minReplicas: 1,
      maxReplicas: 8,
      targetQueuePerReplica: 10,
      stableWindowSeconds: 60,
      panicWindowPercent: 10,
      panicThreshold: 2,
      tolerance: 0.1,
      scaleDownStabilizationSeconds: 300,
      maxChangesPerMinute: 4,
      metricsFallback: null,
    });
    const bad = (over: Record<string, unknown>) => autoscaleSpecSchema(16).safeParse({ minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10, ...over }).success;
    expect(bad({ maxReplicas: 17 })).toBe(false);
    expect(bad({ minReplicas: 0 })).toBe(false);
    expect(bad({ minReplicas: 9 })).toBe(false); // above max
    expect(bad({ targetQueuePerReplica: 0 })).toBe(false);
    expect(bad({ stableWindowSeconds: 5 })).toBe(false);
    expect(bad({ metricsFallback: { replicas: 9, afterSeconds: 30 } })).toBe(false); // outside the range
    expect(bad({ metricsFallback: { replicas: 2, afterSeconds: 30 } })).toBe(true);
    expect(bad({ unknown: 1 })).toBe(false);
  });
  it('clampReplicas keeps replicas within the range', () => {
    expect([0, 1, 5, 8, 9].map((n) => clampReplicas(spec, n))).toEqual([1, 1, 5, 8, 8]);
  });
});

describe('autoscaleIdentity and autoscalePatch', () => {
  it('a null field and an absent one are the same spec (a merge patch of null removes the key on the CR)', () => {
    const { metricsFallback: _, ...withoutFallback } = spec;
    expect(autoscaleIdentity(spec)).toBe(autoscaleIdentity(withoutFallback));
    expect(autoscaleIdentity({ ...spec, metricsFallback: { replicas: 2, afterSeconds: 30 } })).not.toBe(autoscaleIdentity(spec));
    expect(autoscaleIdentity(undefined)).toBeNull();
    expect(autoscaleIdentity(null)).toBeNull();
  });
  it('the patch names every nullable field, so a fallback the spec dropped is removed from the CR', () => {
    expect(autoscalePatch(autoscaleIdentity(spec))).toEqual({ ...spec, metricsFallback: null });
    const withFallback = { ...spec, metricsFallback: { replicas: 2, afterSeconds: 30 } };
    expect(autoscalePatch(autoscaleIdentity(withFallback))).toEqual(withFallback);
    expect(autoscalePatch(null)).toBeNull();
  });
});
