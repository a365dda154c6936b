import { describe, expect, it } from 'vitest';
import { createLogger } from '../runtime/log.ts';
import type { ClaimedRow } from './outbox-store.ts';
import { OutboxPoller, type PollerOptions } from './poller.ts';
import type { Db } from '../../ledger/db.ts';

// restore() and take() never touch the database
const noShards = async () => [];
const fence = { cluster: 'default', epoch: async () => 1, forTenants: async () => 1 };
const poller = () => new OutboxPoller({ shards: noShards, holder: 'h', fence, enqueue: () => undefined, log: createLogger({ level: 'error' }) });
const row = (seq: number, until: number, by = 'c'): ClaimedRow => ({
  seq,
  tenant: 'acme',
  reservationId: 'r1',
  kind: 'create',
  attempts: 0,
  requestId: null,
  claim: { cluster: 'default', by, until: new Date(until), epoch: 1 },
});

describe('OutboxPoller.restore: rows whose failure could not be recorded', () => {
  it('are handed to the next reconcile of their reservation while the claim lasts', () => {
    const p = poller();
    p.restore([row(1, 10_000)], new Date(5_000));
    expect(p.take('r1').map((r) => r.seq)).toEqual([1]);
    expect(p.take('r1')).toEqual([]); // exactly once
  });

  it('are dropped once the claim ran out (the poller claims them again)', () => {
    const p = poller();
    p.restore([row(1, 10_000)], new Date(10_000));
    expect(p.take('r1')).toEqual([]);
  });
});

describe('OutboxPoller: the prefetch of a claim round', () => {
  /** A shard whose claim finds one due `create` row of reservation r1 (claimDue's three statements). */
  const shardDb = {
    async execute(sql: string) {
      if (sql.startsWith('SELECT seq, tenant FROM outbox')) return { rows: [{ seq: 1, tenant: 'acme' }], rowsAffected: 0 };
      if (sql.startsWith('UPDATE outbox')) return { rows: [], rowsAffected: 1 };
      return { rows: [{ seq: 1, tenant: 'acme', reservation_id: 'r1', kind: 'create', attempts: 0, request_id: null }], rowsAffected: 0 };
    },
    withSignal() {
      return this;
    },
  } as unknown as Db;
  const shards = async () => [{ name: '', db: shardDb, roundTrips: 1 as const }];

  async function firstRound(prefetch: PollerOptions['prefetch']): Promise<string[]> {
    const seen: string[] = [];
    let enqueued!: () => void;
    const done = new Promise<void>((resolve) => (enqueued = resolve));
    const p = new OutboxPoller({
      shards,
      holder: 'h',
      fence,
      prefetch: async (db, rows) => {
        seen.push(`prefetch ${rows.map((r) => r.reservationId).join(',')} on the claim's shard: ${db === shardDb}`);
        await prefetch?.(db, rows);
      },
      enqueue: (r) => {
        seen.push(`enqueue ${r.reservationId}`);
        enqueued();
      },
      log: createLogger({ level: 'error' }),
    });
    p.start();
    await done;
    await p.stop();
    return seen;
  }

  it('reads before the rows are enqueued, on the shard they were claimed from', async () => {
    expect(await firstRound(async () => undefined)).toEqual(['prefetch r1 on the claim\'s shard: true', 'enqueue r1']);
  });

  it('a failed prefetch still enqueues the rows (the reconcile reads the ledger itself)', async () => {
    expect(await firstRound(async () => Promise.reject(new Error('database down')))).toEqual(['prefetch r1 on the claim\'s shard: true', 'enqueue r1']);
  });
});
