// Crash injection for tests: `MODELDOCK_CRASH_AT=<point>` makes the process SIGKILL itself the
// moment that named point is reached — no cleanup, no graceful shutdown, exactly like a node
// failure or an OOM kill. With `MODELDOCK_CRASH_SIGNAL=SIGSTOP` it freezes there instead (a long
// GC pause or a stalled VM): after SIGCONT it carries on from that very point, as a deposed
// leader would. Points:
export type CrashPoint =
  | 'after-deployment-create' // the ModelService reconciler's Deployment create answered; the Service's, sent with it, may not have
  | 'after-claim' // an outbox row is claimed, nothing done yet
  | 'after-cr-create-before-ack' // the ModelService exists, the outbox row is not acknowledged
  | 'inside-ack-before-commit' // a delivery's acknowledgement (one, or a claim's group): row done, binding, delivered sent, COMMIT not
  | 'after-ack' // binding written, reservation delivered, row done
  | 'after-cr-delete-before-state' // the delete was accepted, the reservation is not releasing yet
  | 'after-releasing-before-release' // state releasing, the release transaction not started
  | 'inside-release-before-commit' // release statements sent, COMMIT not
  | 'after-cr-scale-before-ack' // a change's replicas patched onto the ModelService, not yet recorded applied
  | 'inside-refund-before-commit' // a decrease's refund: reservation and movement written, usage and COMMIT not
  | 'after-release-before-dequeue' // a release or refund committed, the tenant's queue not yet looked at
  | 'inside-dequeue-before-commit' // a queued admission moved to admitted with its charge, outbox row and usage, COMMIT not
  | 'after-mark-lost' // a supervisor's `lost` committed (state, epoch, audit), the shards' modes not yet synced
  | 'inside-move-before-commit' // a failover move's statements sent (placement, reservation, outbox, movement), COMMIT not
  | 'after-move-before-create' // a failover move committed, its create row not yet claimed by the target
  | 'after-leftover-delete-before-free' // a leftover ModelService's delete accepted, its stranded room not yet freed
  | 'inside-free-stranded-before-commit'; // a stranded placement freed and its room unstranded, COMMIT not

let fired = false;

/** Fires once per process: a resumed (SIGCONT) process runs on normally from then on. */
export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv = process.env): void {
  if (fired || env.MODELDOCK_CRASH_AT !== point) return;
  fired = true;
  const signal = env.MODELDOCK_CRASH_SIGNAL === 'SIGSTOP' ? 'SIGSTOP' : 'SIGKILL';
  process.stderr.write(`${JSON.stringify({ level: 'warn', msg: `crash point reached: ${signal}`, point })}\n`);
  process.kill(process.pid, signal);
}
