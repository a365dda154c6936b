import { describe, expect, it } from 'vitest';
import { createLogger } from '../runtime/log.ts';
import type { ClaimedRow } from './outbox-store.ts';
import { OutboxPoller } from './poller.ts';

// restore() and take() never touch the database
const noShards = async () => [];
const fence = { epoch: async () => 1, forTenants: async () => 1 };
const poller = () => new OutboxPoller({ shards: noShards, holder: 'h', fence, enqueue: () => undefined, log: createLogger({ level: 'error' }) });
const row = (seq: number, until: number, by = 'c'): ClaimedRow => ({
  seq,
  tenant: 'acme',
  reservationId: 'r1',
  kind: 'create',
  attempts: 0,
  requestId: null,
  claim: { by, until: new Date(until), epoch: 1 },
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
