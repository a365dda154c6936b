import { describe, expect, it } from 'vitest';
import type { ClaimedRow } from './outbox-store.ts';
import { deliveryRows } from './deliver.ts';

const claim = { cluster: 'default', by: 'c', until: new Date(0), epoch: 1 };
const row = (seq: number, kind: ClaimedRow['kind']): ClaimedRow => ({ seq, tenant: 'acme', reservationId: 'r', kind, attempts: 0, requestId: null, claim });

describe('deliveryRows: which claimed rows deliver a reservation', () => {
  const create = row(1, 'create');
  const reconcile = row(2, 'reconcile');
  const reconcile2 = row(3, 'reconcile');
  const del = row(4, 'delete');
  it.each([
    { name: 'a create row delivers', rows: [create, reconcile], state: 'admitted', want: [create] },
    { name: 'admitted without a create row: one reconcile row re-delivers (the cron safety net)', rows: [reconcile, reconcile2], state: 'admitted', want: [reconcile] },
    { name: 'a delete row never delivers', rows: [del], state: 'admitted', want: [] },
    { name: 'not admitted: reconcile rows only reconcile', rows: [reconcile], state: 'delivered', want: [] },
    { name: 'not admitted: the create row is still handed to deliver (which acknowledges it)', rows: [create], state: 'deleting', want: [create] },
    { name: 'no reservation row at all', rows: [reconcile], state: undefined, want: [] },
  ])('$name', ({ rows, state, want }) => {
    expect(deliveryRows(rows, state === undefined ? undefined : { state })).toEqual(want);
  });
});
