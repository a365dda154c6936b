import { describe, expect, test } from 'vitest';
import { modelLoaded, readiness, type ReadinessState } from './readiness.ts';

const state = (over: Partial<ReadinessState> = {}): ReadinessState => ({
  draining: false,
  neverReady: false,
  uptimeMs: 1_000,
  warmupMs: 1_000,
  ...over,
});

describe('readiness', () => {
  test.each<[string, Partial<ReadinessState>, ReturnType<typeof readiness>, boolean]>([
    ['warm-up over', {}, 'ready', true],
    ['one millisecond before the end of the warm-up', { uptimeMs: 999 }, 'warming_up', false],
    ['no warm-up', { uptimeMs: 0, warmupMs: 0 }, 'ready', true],
    ['never ready, long after the warm-up', { neverReady: true, uptimeMs: 86_400_000 }, 'never_ready', false],
    ['never ready, during the warm-up', { neverReady: true, uptimeMs: 0 }, 'never_ready', false],
    ['draining', { draining: true }, 'draining', true],
    ['draining wins over never ready', { draining: true, neverReady: true }, 'draining', false],
    ['draining wins over the warm-up', { draining: true, uptimeMs: 0 }, 'draining', false],
  ])('%s', (_, over, expected, loaded) => {
    expect(readiness(state(over))).toBe(expected);
    expect(modelLoaded(state(over))).toBe(loaded);
  });
});
