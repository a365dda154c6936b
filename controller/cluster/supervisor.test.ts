import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Leaving, MarkLost, Overdue } from '../../ledger/cluster-failover.ts';
import type { Movable, MoveOutcome } from '../../ledger/failover-move.ts';
import { createLogger } from '../runtime/log.ts';
import { createSupervisor, GRACE_PASSES, MOVES_PER_PASS, supervisorMetrics, type SupervisorLedger, type SupervisorOptions } from './supervisor.ts';

interface Script {
  overdue?: Overdue[];
  outcomes?: Record<string, MarkLost | Error>;
  lost?: Leaving[];
  /** Per lost cluster, the shard rows the next followState changes (default 0: they follow already). */
  behind?: Record<string, number>;
  movable?: Record<string, Movable[]>;
  moves?: Record<string, MoveOutcome | Error>;
  /** Where the policy sends each admission (default c1): a move with another onlyTo is `elsewhere`. */
  policy?: Record<string, string>;
}

function ledger(s: Script): SupervisorLedger & { asked: string[]; tried: string[]; followed: string[] } {
  const asked: string[] = [];
  const tried: string[] = [];
  const followed: string[] = [];
  return {
    asked,
    tried,
    followed,
    overdue: async () => s.overdue ?? [],
    markLost: async (c) => {
      asked.push(`${c.name}@${c.epoch}`);
      const o = s.outcomes![c.name]!;
      if (o instanceof Error) throw o;
      return o;
    },
    lost: async () => s.lost ?? [],
    followState: async (c) => {
      followed.push(`${c.name}@${c.version}`);
      const rows = s.behind?.[c.name] ?? 0;
      if (s.behind) s.behind[c.name] = 0;
      return rows;
    },
    movable: async (cluster, limit) => (s.movable?.[cluster] ?? []).slice(0, limit),
    move: async (m, from, onlyTo) => {
      tried.push(`${m.id}@${m.seq} from ${from.name}@${from.epoch}${onlyTo ? ` only to ${onlyTo}` : ''}`);
      const to = s.policy?.[m.id] ?? 'c1';
      if (onlyTo && onlyTo !== to) return { kind: 'elsewhere', to };
      const o = s.moves?.[m.id] ?? { kind: 'moved', to, seq: m.seq + 1 };
      if (o instanceof Error) throw o;
      if (o.kind === 'moved') s.movable![from.name] = s.movable![from.name]!.filter((x) => x.id !== m.id); // not on the lost cluster any more
      return o;
    },
  };
}

/** A supervisor of cluster `own` (default: one no admission goes to, so its grace passes move nothing), and its first pass. */
function run(l: SupervisorLedger, o: Partial<Pick<SupervisorOptions, 'onMoved' | 'random' | 'ownCluster'>> & { passes?: number } = {}) {
  const registry = new Registry();
  const metrics = supervisorMetrics(registry);
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'info', write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const metric = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values.map((v) => [v.labels, v.value]);
  const pass = createSupervisor({ ledger: l, metrics, log, ownCluster: o.ownCluster ?? 'c9', ...o });
  const signal = new AbortController().signal;
  return { pass: (async () => {
    for (let i = 1; i < (o.passes ?? 1); i++) await pass(signal);
    return pass(signal);
  })(), next: () => pass(signal), lines, metric };
}
/** Past the grace passes: a supervisor moves what goes anywhere. */
const AFTER_GRACE = GRACE_PASSES + 1;

const movable = (id: string, seq = 1): Movable => ({ tenant: 't', id, seq });
const leaving = (name: string, epoch: number): Leaving => ({ name, epoch, state: 'lost', version: epoch * 10 });

describe('supervise (one pass)', () => {
  it('marks each overdue cluster at the epoch it was seen, counts the ones it marked, and goes on past one that fails', async () => {
    const l = ledger({
      overdue: [
        { name: 'c1', epoch: 3 },
        { name: 'c2', epoch: 7 },
        { name: 'c3', epoch: 1 },
      ],
      outcomes: { c1: new Error('database down'), c2: { kind: 'lost', epoch: 8, heartbeatAgeMs: 12_000 }, c3: { kind: 'unchanged', why: 'taken over since' } },
    });
    const r = run(l);
    expect((await r.pass).marked).toEqual(['c2']);
    expect(l.asked).toEqual(['c1@3', 'c2@7', 'c3@1']);
    expect(await r.metric('modeldock_cluster_lost_total')).toEqual([[{ cluster: 'c2' }, 1]]);
    expect(r.lines.map((l) => l.msg)).toEqual(['marking a cluster lost failed: retried next pass', 'cluster marked lost: no heartbeat within its lease']);
  });

  it('nothing overdue or lost: nothing asked, nothing moved', async () => {
    const l = ledger({});
    expect(await run(l).pass).toEqual({ marked: [], moved: [] });
    expect([...l.asked, ...l.tried]).toEqual([]);
  });

  it("brings each lost cluster's shards to its state on every pass before it moves (a crash after `lost` left them open), and says so when it changed any", async () => {
    const l = ledger({ lost: [leaving('c2', 3), leaving('c4', 1)], behind: { c2: 2 }, movable: { c2: [movable('a')], c4: [] } });
    const r = run(l, { passes: AFTER_GRACE });
    expect((await r.pass).moved).toEqual([{ id: 'a', to: 'c1' }]); // past the grace passes
    expect(l.followed).toEqual(Array.from({ length: AFTER_GRACE }, () => ['c2@30', 'c4@10']).flat());
    expect(r.lines.filter((x) => x.level === 'warn').map((x) => [x.msg, x.cluster, x.shards])).toEqual([["a lost cluster's shards brought to its state: a crash had left them behind", 'c2', 2]]);
  });

  it(`for its first ${GRACE_PASSES} passes over a lost cluster, moves only what the policy sends to its own cluster; then anything`, async () => {
    const l = ledger({ lost: [leaving('c2', 9)], movable: { c2: [movable('a'), movable('b')] }, policy: { a: 'c1', b: 'c3' }, moves: { a: { kind: 'unchanged', why: 'test' } } });
    const r = run(l, { ownCluster: 'c3', random: () => 0.99 });
    expect((await r.pass).moved).toEqual([{ id: 'b', to: 'c3' }]);
    expect(l.tried).toEqual(['a@1 from c2@9 only to c3', 'b@1 from c2@9 only to c3']);
    l.tried.length = 0;
    for (let i = 2; i <= GRACE_PASSES; i++) await r.next();
    expect(l.tried.every((t) => t.endsWith('only to c3'))).toBe(true);
    l.tried.length = 0;
    await r.next();
    expect(l.tried).toEqual(['a@1 from c2@9']); // b moved in the first pass; a, refused there, is tried without a preference now
  });

  it("moves every running admission of each lost cluster at the placement and the cluster's epoch seen, counts and logs each, and tells onMoved where it went", async () => {
    const l = ledger({
      lost: [leaving('c2', 9), leaving('c4', 2)],
      movable: { c2: [movable('a', 1), movable('b', 2)], c4: [movable('c', 1)] },
      policy: { b: 'c3' },
      moves: { a: { kind: 'moved', to: 'c1', seq: 2 }, b: { kind: 'moved', to: 'c3', seq: 3 }, c: { kind: 'moved', to: 'c1', seq: 2 } },
    });
    const told: string[] = [];
    const r = run(l, { onMoved: (to) => void told.push(to), random: () => 0.99, ownCluster: 'c1' });
    expect((await r.pass).moved).toEqual([
      { id: 'a', to: 'c1' },
      { id: 'c', to: 'c1' },
    ]);
    expect(l.tried).toEqual(['a@1 from c2@9 only to c1', 'b@2 from c2@9 only to c1', 'c@1 from c4@2 only to c1']);
    expect(told).toEqual(['c1', 'c1']);
    l.tried.length = 0;
    for (let i = 2; i <= AFTER_GRACE; i++) await r.next();
    expect(told).toEqual(['c1', 'c1', 'c3']); // b, once any cluster's supervisor may move it
    expect(await r.metric('modeldock_failover_moves_total')).toEqual([
      [{ from: 'c2', to: 'c1' }, 1],
      [{ from: 'c4', to: 'c1' }, 1],
      [{ from: 'c2', to: 'c3' }, 1],
    ]);
    expect(r.lines.filter((x) => x.msg === 'admission moved off a lost cluster').map((x) => [x.admissionId, x.from, x.to, x.placement])).toEqual([
      ['a', 'c2', 'c1', 2],
      ['c', 'c4', 'c1', 2],
      ['b', 'c2', 'c3', 3],
    ]);
  });

  it('a move that finds no room, changed meanwhile, or failing does not stop the others; no room is counted and said once per cluster', async () => {
    const l = ledger({
      lost: [leaving('c2', 9)],
      movable: { c2: [movable('a'), movable('b'), movable('c'), movable('d')] },
      moves: { a: { kind: 'no-room' }, b: { kind: 'unchanged', why: 'deleted meanwhile' }, c: new Error('deadlock'), d: { kind: 'no-room' } },
    });
    const r = run(l, { random: () => 0.99, ownCluster: 'c1' });
    expect((await r.pass).moved).toEqual([]);
    expect(l.tried).toHaveLength(4);
    expect(await r.metric('modeldock_failover_no_room_total')).toEqual([[{ cluster: 'c2' }, 2]]);
    expect(r.lines.map((x) => [x.level, x.msg, x.admissions ?? x.admissionId])).toEqual([
      ['warn', 'moving an admission off a lost cluster failed: retried next pass', 'c'],
      ['warn', 'admissions of a lost cluster stay: no open cluster has room for them (tried again next pass)', 2],
    ]);
  });

  it(`moves at most ${MOVES_PER_PASS} admissions a pass, across the lost clusters, in the random order given`, async () => {
    const many = (prefix: string) => Array.from({ length: 80 }, (_, i) => movable(`${prefix}${i}`));
    const l = ledger({ lost: [leaving('c2', 1), leaving('c3', 1)], movable: { c2: many('x'), c3: many('y') } });
    const pass = await run(l, { random: () => 0, passes: AFTER_GRACE }).pass;
    l.tried.splice(0, l.tried.length - MOVES_PER_PASS); // the last pass's
    expect(pass.moved).toHaveLength(MOVES_PER_PASS);
    // random() = 0 rotates the page by one (Fisher–Yates swapping each item with the first).
    expect(l.tried[0]).toBe('x1@1 from c2@1');
    expect(l.tried.filter((t) => t.startsWith('y'))).toHaveLength(MOVES_PER_PASS - 80);
  });
});
