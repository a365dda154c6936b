// The quota_movement row of a charge (the Worker's admission and increase, the dequeue of a queued
// admission on either side). Its primary key (reservation, generation, direction) refuses a second
// charge of the same change. The controller's refunds, releases and resolutions write theirs in
// controller/reservation/quota-moves.ts.
import type { Amounts } from '../schema/model-service.ts';
import type { Queryable } from './db.ts';
import { amountArgs, amountColumns, RESOURCE_NAMES } from './resources.ts';
import type { MovementDirection } from './rows.ts';

export async function insertMovement(
  q: Queryable,
  m: { reservationId: string; tenant: string; generation: number; direction: MovementDirection; amounts: Amounts; now: Date },
): Promise<void> {
  await q.execute(
    `INSERT INTO quota_movement (reservation_id, generation, direction, tenant, ${amountColumns()}, at)
     VALUES (?, ?, ?, ?, ${RESOURCE_NAMES.map(() => '?').join(', ')}, ?)`,
    [m.reservationId, m.generation, m.direction, m.tenant, ...amountArgs(m.amounts), m.now],
  );
}
