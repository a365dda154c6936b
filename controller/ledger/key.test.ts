import { describe, expect, it } from 'vitest';
import { ledgerKey, parseLedgerKey } from './key.ts';

describe('ledger work-queue keys', () => {
  it('round-trip (tenant, id)', () => {
    const k = { tenant: 'acme', id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    expect(ledgerKey(k)).toBe('acme/01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(parseLedgerKey(ledgerKey(k))).toEqual(k);
  });

  it.each(['01ARZ3NDEKTSV4RRFFQ69G5FAV', '/01ARZ', 'acme/', ''])('refuses %j (no tenant or no id)', (key) => {
    expect(parseLedgerKey(key)).toBeUndefined();
  });
});
