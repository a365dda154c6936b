import { describe, expect, it } from 'vitest';
import { reservationKey, parseReservationKey } from './key.ts';

describe('ledger work-queue keys', () => {
  it('round-trip (tenant, id)', () => {
    const k = { tenant: 'acme', id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    expect(reservationKey(k)).toBe('acme/01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(parseReservationKey(reservationKey(k))).toEqual(k);
  });

  it.each(['01ARZ3NDEKTSV4RRFFQ69G5FAV', '/01ARZ', 'acme/', ''])('refuses %j (no tenant or no id)', (key) => {
    expect(parseReservationKey(key)).toBeUndefined();
  });
});
