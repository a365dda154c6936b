import { describe, expect, it } from 'vitest';
import { fairOrder, weightedShare, type FairCandidate } from './fair-pick.ts';
import type { Amounts } from '../schema/model-service.ts';

const amounts = (cpu: number, memory = 0, count = 0): Amounts => ({ cpu, memory, 'nvidia.com/gpu': 0, modelservices: count });
const CAP = amounts(8000, 32_768, 8);
const cand = (tenant: string, used: Amounts, weight = 1): FairCandidate => ({ tenant, used, weight });

describe('weightedShare: the dominant share of the capacity over the weight', () => {
  it('is the largest fraction held in any resource', () => {
    expect(weightedShare(amounts(2000, 16_384, 1), CAP, 1)).toBe(0.5); // memory dominates
    expect(weightedShare(amounts(6000, 1024, 3), CAP, 1)).toBe(0.75); // cpu dominates
  });

  it('is divided by the weight', () => {
    expect(weightedShare(amounts(4000, 0, 4), CAP, 2)).toBe(0.25);
  });

  it('ignores resources the shard has no capacity of, and is 0 for nothing held', () => {
    expect(weightedShare({ ...amounts(0), 'nvidia.com/gpu': 3 }, CAP, 1)).toBe(0);
    expect(weightedShare(amounts(0), CAP, 1)).toBe(0);
  });

  it('treats a weight below 1 as 1 (never divides by 0)', () => {
    expect(weightedShare(amounts(4000), CAP, 0)).toBe(0.5);
  });
});

describe('fairOrder', () => {
  it('offers the room to the lowest weighted share first', () => {
    const order = fairOrder([cand('a', amounts(4000, 0, 4)), cand('b', amounts(1000, 0, 1)), cand('c', amounts(2000, 0, 2))], CAP);
    expect(order.map((c) => c.tenant)).toEqual(['b', 'c', 'a']);
  });

  it('a heavier weight ranks a tenant ahead at the same usage', () => {
    expect(fairOrder([cand('a', amounts(2000, 0, 2)), cand('b', amounts(2000, 0, 2), 2)], CAP).map((c) => c.tenant)).toEqual(['b', 'a']);
  });

  it('ties go to the name first, so equal tenants alternate as each admission raises the winner', () => {
    expect(fairOrder([cand('b', amounts(1000, 0, 1)), cand('a', amounts(1000, 0, 1))], CAP).map((c) => c.tenant)).toEqual(['a', 'b']);
  });

  it('does not change its input', () => {
    const input = [cand('b', amounts(3000)), cand('a', amounts(1000))];
    fairOrder(input, CAP);
    expect(input.map((c) => c.tenant)).toEqual(['b', 'a']);
  });
});

/**
 * The acceptance's shape as a simulation of the decision alone: a room for 4 size-1 admissions,
 * tenant A holds all 4 with 100 queued, B arrives with 10. Each step the oldest running admission is
 * released and the room goes to fairOrder's first. B's first admission comes before A's next, and
 * while both wait the admissions follow the weights.
 */
function simulate(weightA: number, weightB: number): { sequence: string[] } {
  const cap = amounts(4000, 0, 4);
  const running: string[] = ['a', 'a', 'a', 'a'];
  const queued = new Map([['a', 100], ['b', 10]]);
  const sequence: string[] = [];
  while ((queued.get('b') ?? 0) > 0) {
    running.shift();
    const held = (t: string) => running.filter((r) => r === t).length;
    const cands = [...queued].filter(([, n]) => n > 0).map(([t]) => cand(t, amounts(held(t) * 1000, 0, held(t)), t === 'a' ? weightA : weightB));
    const winner = fairOrder(cands, cap)[0]!.tenant;
    queued.set(winner, queued.get(winner)! - 1);
    running.push(winner);
    sequence.push(winner);
  }
  return { sequence };
}

describe('fairOrder over releases (the acceptance, simulated)', () => {
  it('equal weights: B is admitted first, then they alternate', () => {
    const { sequence } = simulate(1, 1);
    expect(sequence[0]).toBe('b');
    const a = sequence.filter((t) => t === 'a').length;
    expect(a / 10).toBeGreaterThanOrEqual(0.6);
    expect(a / 10).toBeLessThanOrEqual(1);
  });

  it('B weighted 3: about three of B to one of A', () => {
    const { sequence } = simulate(1, 3);
    expect(sequence[0]).toBe('b');
    const a = sequence.filter((t) => t === 'a').length;
    expect(10 / a).toBeGreaterThanOrEqual(2);
    expect(10 / a).toBeLessThanOrEqual(5);
  });
});
