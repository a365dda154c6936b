import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { MarkLost, Overdue } from '../../ledger/cluster-failover.ts';
import { createLogger } from '../runtime/log.ts';
import { supervise, supervisorMetrics, type SupervisorLedger } from './supervisor.ts';

function ledger(overdue: Overdue[], outcomes: Record<string, MarkLost | Error>): SupervisorLedger & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    overdue: async () => overdue,
    markLost: async (c) => {
      asked.push(`${c.name}@${c.epoch}`);
      const o = outcomes[c.name]!;
      if (o instanceof Error) throw o;
      return o;
    },
  };
}

describe('supervise (one pass)', () => {
  it('marks each overdue cluster at the epoch it was seen, counts the ones it marked, and goes on past one that fails', async () => {
    const l = ledger(
      [
        { name: 'c1', epoch: 3 },
        { name: 'c2', epoch: 7 },
        { name: 'c3', epoch: 1 },
      ],
      { c1: new Error('database down'), c2: { kind: 'lost', epoch: 8, heartbeatAgeMs: 12_000 }, c3: { kind: 'unchanged', why: 'taken over since' } },
    );
    const registry = new Registry();
    const lost = supervisorMetrics(registry);
    const lines: string[] = [];
    const log = createLogger({ level: 'warn', write: (line) => lines.push(line) });
    expect(await supervise(l, lost, log, new AbortController().signal)).toEqual(['c2']);
    expect(l.asked).toEqual(['c1@3', 'c2@7', 'c3@1']);
    expect((await lost.get()).values.map((v) => [v.labels.cluster, v.value])).toEqual([['c2', 1]]);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['marking a cluster lost failed: retried next pass', 'cluster marked lost: no heartbeat within its lease']);
  });

  it('nothing overdue: nothing asked', async () => {
    const l = ledger([], {});
    expect(await supervise(l, supervisorMetrics(new Registry()), createLogger({ level: 'error' }), new AbortController().signal)).toEqual([]);
    expect(l.asked).toEqual([]);
  });
});
