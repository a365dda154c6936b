// The startup timeline of an admission as the tenant API shows it (issue 14): the five moments
// of a start — admitted (the declaration persisted), delivered (the ModelService created),
// scheduled (the first pod bound to a node), started (the first container running), ready (the
// first ready endpoint) — each with the time since admission. Pure.
import { z } from 'zod';

export const STAGES = ['admitted', 'delivered', 'scheduled', 'started', 'ready'] as const;
export type Stage = (typeof STAGES)[number];

const at = z.string().nullable();
const since = z.number().int().min(0).nullable();

export const timelineSchema = z
  .object({
    admittedAt: z.string().describe('The admission was persisted (its quota charged).'),
    deliveredAt: at.describe('The ModelService was created in the cluster.'),
    scheduledAt: at.describe('The first pod was bound to a node (Kubernetes time: second precision).'),
    startedAt: at.describe('The first container was running (second precision).'),
    readyAt: at.describe('The Service first had a ready endpoint.'),
    sinceAdmissionMs: z
      .object({ delivered: since, scheduled: since, started: since, ready: since })
      .describe('Milliseconds from admission to each moment, never less than the previous moment reached (scheduled and started have second precision).'),
  })
  .describe('Where the start of this admission is: null for a moment not reached (or not observed) yet.');
export type Timeline = z.output<typeof timelineSchema>;

type Times = Record<'deliveredAt' | 'scheduledAt' | 'startedAt' | 'readyAt', string | null>;

/**
 * The moments as stored, and the milliseconds since admission to each. Kubernetes reports the
 * scheduled and started moments with second precision: such a time may read earlier than the
 * moment before it (scheduled at 12:00:05 after a delivery at 12:00:05.400). A moment cannot
 * precede the one before it, so each duration is at least the previous reached one's.
 */
export function timelineOf(admittedAt: string, t: Times): Timeline {
  const start = Date.parse(admittedAt);
  let floor = 0;
  const since = (v: string | null): number | null => {
    if (v === null) return null;
    floor = Math.max(floor, Date.parse(v) - start);
    return floor;
  };
  return {
    admittedAt,
    ...t,
    sinceAdmissionMs: { delivered: since(t.deliveredAt), scheduled: since(t.scheduledAt), started: since(t.startedAt), ready: since(t.readyAt) },
  };
}
