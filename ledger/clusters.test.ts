import { describe, expect, it } from 'vitest';
import type { Amounts } from '../schema/model-service.ts';
import { CLUSTER_NAME, CLUSTER_STATES, MODE_OF_STATE, clusterState, lostTransition, operatorTransition, spreadCapacity, takeoverTransition, type ClusterState, type LostFacts, type ReadyFacts } from './clusters.ts';

const fresh: ReadyFacts = { heartbeatFresh: true, strandedAny: false };

describe('operatorTransition', () => {
  // Every state × action, with the facts a lost cluster's `ready` depends on.
  const table: Array<[action: 'drain' | 'ready', from: ClusterState, facts: ReadyFacts, want: string]> = [
    ['drain', 'ready', fresh, 'change→draining'],
    ['drain', 'draining', fresh, 'unchanged'],
    ['drain', 'joining', fresh, 'refused'],
    ['drain', 'lost', fresh, 'refused'],
    ['drain', 'forgotten', fresh, 'refused'],
    ['ready', 'ready', fresh, 'unchanged'],
    ['ready', 'draining', fresh, 'change→ready'],
    ['ready', 'draining', { heartbeatFresh: false, strandedAny: true }, 'change→ready'],
    ['ready', 'lost', fresh, 'change→ready'],
    ['ready', 'lost', { heartbeatFresh: false, strandedAny: false }, 'refused'],
    ['ready', 'lost', { heartbeatFresh: true, strandedAny: true }, 'refused'],
    ['ready', 'joining', fresh, 'refused'],
    ['ready', 'forgotten', fresh, 'refused'],
  ];
  it.each(table)('%s from %s (%o) → %s', (action, from, facts, want) => {
    const d = operatorTransition(action, from, facts);
    const got = d.kind === 'change' ? `change→${d.to}` : d.kind;
    expect(got).toBe(want);
  });

  it('says why a lost cluster cannot be made ready', () => {
    expect(operatorTransition('ready', 'lost', { heartbeatFresh: false, strandedAny: false })).toMatchObject({ reason: expect.stringMatching(/heartbeat/) });
    expect(operatorTransition('ready', 'lost', { heartbeatFresh: true, strandedAny: true })).toMatchObject({ reason: expect.stringMatching(/stranded/) });
  });
});

describe('takeoverTransition', () => {
  it.each<[ClusterState, ReturnType<typeof takeoverTransition>]>([
    ['joining', { kind: 'take', to: 'ready', joined: true }],
    ['ready', { kind: 'take', to: 'ready', joined: false }],
    ['draining', { kind: 'take', to: 'draining', joined: false }],
    ['lost', { kind: 'take', to: 'lost', joined: false }],
    ['forgotten', { kind: 'refused', reason: 'forgotten: add it again (npm run cluster -- add)' }],
  ])('a controller taking a %s cluster over', (from, decision) => {
    expect(takeoverTransition(from)).toEqual(decision);
  });
});

describe('lostTransition (the supervisor, T6)', () => {
  const facts = (over: Partial<LostFacts> = {}): LostFacts => ({ state: 'ready', epoch: 4, leaseMs: 10_000, heartbeatAgeMs: 10_001, ...over });
  it('a ready or draining cluster whose heartbeat is older than its lease, at the epoch seen, is lost with the next epoch', () => {
    expect(lostTransition(facts(), 4)).toEqual({ kind: 'lose', epoch: 5 });
    expect(lostTransition(facts({ state: 'draining' }), 4)).toEqual({ kind: 'lose', epoch: 5 });
  });
  const unchanged: Array<[string, LostFacts, number, string]> = [
    ['a heartbeat exactly at the lease', facts({ heartbeatAgeMs: 10_000 }), 4, 'within the lease'],
    ['a fresh heartbeat (no false failover)', facts({ heartbeatAgeMs: 3_000 }), 4, 'within the lease'],
    ['no heartbeat ever', facts({ heartbeatAgeMs: null }), 4, 'within the lease'],
    ['taken over since it was seen', facts({ epoch: 5 }), 4, 'taken over since'],
    ...(['joining', 'lost', 'forgotten'] as const).map((state): [string, LostFacts, number, string] => [`a ${state} cluster`, facts({ state }), 4, `it is ${state}`]),
  ];
  it.each(unchanged)('%s changes nothing', (_what, f, seen, why) => {
    const d = lostTransition(f, seen);
    expect(d.kind).toBe('unchanged');
    expect(d.kind === 'unchanged' && d.why).toContain(why);
  });
});

describe('states and names', () => {
  it('only a ready cluster takes placements', () => {
    expect(CLUSTER_STATES.filter((s) => MODE_OF_STATE[s] === 'open')).toEqual(['ready']);
    expect(MODE_OF_STATE.joining).toBe('closed');
  });
  it('reads a known state and refuses an unknown one', () => {
    expect(clusterState('draining')).toBe('draining');
    expect(() => clusterState('paused')).toThrow(/unknown cluster state/);
  });
  it('names are DNS labels, never an anchor', () => {
    for (const ok of ['eu-1', 'c1', 'a'.repeat(63)]) expect(CLUSTER_NAME.test(ok)).toBe(true);
    for (const bad of ['', '~a0', 'EU', '-eu', 'eu-', 'eu_1', 'a'.repeat(64)]) expect(CLUSTER_NAME.test(bad)).toBe(false);
  });
});

describe('spreadCapacity', () => {
  const cap: Amounts = { cpu: 64_000, memory: 262_144, 'nvidia.com/gpu': 7, modelservices: 3 };

  it('gives one shard everything (MariaDB: the allotment check is the capacity check)', () => {
    expect(spreadCapacity(cap, 1)).toEqual({ pool: { cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 }, grants: [cap] });
  });

  it('gives n shards ⌊75 %/n⌋ each and keeps the rest in the pool, nothing lost to rounding', () => {
    const s = spreadCapacity(cap, 2);
    expect(s.grants).toEqual([
      { cpu: 24_000, memory: 98_304, 'nvidia.com/gpu': 2, modelservices: 1 },
      { cpu: 24_000, memory: 98_304, 'nvidia.com/gpu': 2, modelservices: 1 },
    ]);
    expect(s.pool).toEqual({ cpu: 16_000, memory: 65_536, 'nvidia.com/gpu': 3, modelservices: 1 });
    for (const n of [2, 3, 4, 7]) {
      const t = spreadCapacity(cap, n);
      expect(t.grants).toHaveLength(n);
      for (const r of Object.keys(cap) as Array<keyof Amounts>) {
        expect(t.pool[r] + t.grants.reduce((sum, g) => sum + g[r], 0)).toBe(cap[r]);
        expect(t.pool[r]).toBeGreaterThanOrEqual(Math.ceil(cap[r] / 4));
      }
    }
  });

  it('refuses zero shards', () => {
    expect(() => spreadCapacity(cap, 0)).toThrow(/no shard/);
  });
});
