import { describe, expect, it } from 'vitest';
import { PHASES, type Phase } from '../../schema/model-service.ts';
import { newsworthy } from './reconcile.ts';

describe('newsworthy phase changes', () => {
  it('a first rollout that has not run yet is not news; Running, Degraded and Terminating are', () => {
    expect(newsworthy(undefined, 'Pending')).toBe(false);
    expect(newsworthy(undefined, 'Progressing')).toBe(false);
    expect(newsworthy('Pending', 'Progressing')).toBe(false);
    expect(newsworthy('Progressing', 'Pending')).toBe(false);
    for (const from of [undefined, 'Pending', 'Progressing'] as const) {
      for (const to of ['Running', 'Degraded', 'Terminating'] as const) expect(newsworthy(from, to), `${from} → ${to}`).toBe(true);
    }
  });

  it('falling back from Running, Degraded or Terminating is news, whatever it falls to', () => {
    for (const from of ['Running', 'Degraded', 'Terminating'] as const) {
      for (const to of PHASES as readonly Phase[]) if (to !== from) expect(newsworthy(from, to), `${from} → ${to}`).toBe(true);
    }
  });
});
