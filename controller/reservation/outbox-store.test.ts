import { describe, expect, it } from 'vitest';
import type { ExecResult, Queryable, SqlArg } from '../../ledger/db.ts';
import { fail, type ClaimedRow } from './outbox-store.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const LATER = new Date('2026-03-01T12:00:05.000Z');
const row: ClaimedRow = { seq: 9, tenant: 'acme', reservationId: 'r', kind: 'create', attempts: 0, requestId: null, claim: { cluster: 'default', by: 'ctl/abc', until: LATER, epoch: 3 } };

/** A connection whose UPDATEs match `matched` rows, recording what it is sent. */
function connection(matched: number): { q: Queryable; sent: Array<{ sql: string; args: readonly SqlArg[] }> } {
  const sent: Array<{ sql: string; args: readonly SqlArg[] }> = [];
  return {
    sent,
    q: {
      async execute(sql, args = []): Promise<ExecResult> {
        sent.push({ sql: sql.replace(/\s+/g, ' ').trim(), args });
        return { rows: [], rowsAffected: matched };
      },
    },
  };
}

describe('fail(): answers what it wrote', () => {
  it.each([
    { terminal: false, matched: 1, want: 'retry' },
    { terminal: true, matched: 1, want: 'dead' },
    { terminal: false, matched: 0, want: 'lost' },
    { terminal: true, matched: 0, want: 'lost' },
  ])('terminal=$terminal, the claim matching $matched row(s): $want', async ({ terminal, matched, want }) => {
    const { q, sent } = connection(matched);
    expect(await fail(q, row, 'boom', { now: NOW, retryAt: LATER, terminal })).toBe(want);
    // One fenced UPDATE guarded by the claim, whatever it matches.
    expect(sent).toEqual([
      {
        sql: expect.stringMatching(/^UPDATE outbox o JOIN tenant_fence f ON f\.tenant = o\.tenant AND f\.cluster = o\.cluster AND f\.epoch = \? SET o\.attempts = o\.attempts \+ 1, .* WHERE o\.tenant = \? AND o\.seq = \? AND o\.claimed_by = \? AND o\.claimed_until >= \? AND o\.done_at IS NULL$/),
        args: [3, 'boom', LATER, terminal ? NOW : null, terminal, 'acme', 9, 'ctl/abc', NOW],
      },
    ]);
  });
});
