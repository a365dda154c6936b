// The quota_movement row of a charge (the Worker's admission and increase, the dequeue of a queued
// admission on either side) and of a failover move. Its primary key (reservation, generation,
// direction, placement) refuses a second charge of the same change. The controller's refunds, releases and resolutions write theirs in
// controller/reservation/quota-moves.ts.
import type { Amounts } from '../schema/model-service.ts';
import type { Queryable } from './db.ts';
import { amountArgs, amountColumns, RESOURCE_NAMES } from './resources.ts';
import type { MovementDirection } from './rows.ts';

export async function insertMovement(
  q: Queryable,
  m: {
    reservationId: string;
    tenant: string;
    generation: number;
    direction: MovementDirection;
    amounts: Amounts;
    now: Date;
    /** A `move`'s: the placement and cluster it moved to, and what it says (ledger/failover-move.ts). */
    moved?: { placementSeq: number; cluster: string; note: string };
  },
): Promise<void> {
  await q.execute(
    `INSERT INTO quota_movement (reservation_id, generation, direction, placement_seq, cluster, tenant, ${amountColumns()}, note, at)
     VALUES (?, ?, ?, ?, ?, ?, ${RESOURCE_NAMES.map(() => '?').join(', ')}, ?, ?)`,
    [m.reservationId, m.generation, m.direction, m.moved?.placementSeq ?? 1, m.moved?.cluster ?? null, m.tenant, ...amountArgs(m.amounts), m.moved?.note ?? null, m.now],
  );
}
