// The zod schema of the API's `timeline` (schema/timeline.ts has the type, the stages and the
// functions; it stays free of imports, because the page loads it as a browser module).
import { z } from 'zod';
import type { Timeline } from './timeline.ts';

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
  .describe('Where the start of this admission is: null for a moment not reached (or not observed) yet.') satisfies z.ZodType<Timeline>;
