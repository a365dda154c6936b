import { describe, expect, it } from 'vitest';
import { chargedReplicas, withinCharge } from './charge.ts';

// Admitted: 2 replicas of 500m / 1Gi → charged cpu 1000, memory 2048.
const charged = { cpu: 1000, memory: 2048, 'nvidia.com/gpu': 0, modelservices: 1 };
const res = { cpu: '500m', memory: '1Gi' };

describe('withinCharge / chargedReplicas', () => {
  it.each([
    ['the admitted replicas', 2, true, 2],
    ['scaled down', 1, true, 1],
    ['scaled to zero', 0, true, 0],
    ['scaled up by one', 3, false, 2],
    ['scaled far up', 1_000_000_000, false, 2],
  ])('%s (%i replicas)', (_, replicas, fits, revertTo) => {
    expect(withinCharge({ replicas, resources: res }, charged)).toBe(fits);
    expect(chargedReplicas({ replicas, resources: res }, charged)).toBe(revertTo);
  });
  it('per-replica resources raised: the replicas the charge still covers', () => {
    expect(chargedReplicas({ replicas: 2, resources: { cpu: '1', memory: '1Gi' } }, charged)).toBe(1);
    expect(chargedReplicas({ replicas: 2, resources: { cpu: '2', memory: '1Gi' } }, charged)).toBe(0);
  });
  it('a resource that was not charged at all (a GPU added) covers no replica', () => {
    expect(chargedReplicas({ replicas: 2, resources: { ...res, 'nvidia.com/gpu': '1' } }, charged)).toBe(0);
  });
  it('the modelservices count is not a replica resource (an admission from before the count quota was charged 0 of it)', () => {
    expect(chargedReplicas({ replicas: 2, resources: res }, { ...charged, modelservices: 0 })).toBe(2);
  });
  it('no per-replica resources: nothing to exceed', () => {
    expect(withinCharge({ replicas: 50, resources: {} }, { cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 })).toBe(true);
  });
});
