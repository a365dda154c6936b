// The ledger controller's work-queue key: `<tenant>/<reservation id>`. The tenant comes with
// every source of work (the outbox row, the ModelService's and the pod's labels, the resync
// page), so a reconcile finds its rows on the tenant's shard without looking the id up. A tenant
// is a DNS-1123 label and an id a ULID: neither contains '/'.

/** Where a reservation lives: its tenant (the shard) and its id. */
export interface ReservationKey {
  tenant: string;
  id: string;
}

export const reservationKey = (k: ReservationKey): string => `${k.tenant}/${k.id}`;

export function parseReservationKey(key: string): ReservationKey | undefined {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return undefined;
  return { tenant: key.slice(0, slash), id: key.slice(slash + 1) };
}
