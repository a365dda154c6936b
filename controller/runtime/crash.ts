// Crash injection for tests: `MODELDOCK_CRASH_AT=<point>` makes the process SIGKILL itself the
// moment that named point is reached — no cleanup, no graceful shutdown, exactly like a node
// failure or an OOM kill. Points used so far:
//   after-deployment-create   the ModelService reconciler created the Deployment, not yet the Service
export type CrashPoint =
  | 'after-deployment-create'
  // Outbox and ledger (issue 5):
  | 'after-claim' // an outbox row is claimed, nothing done yet
  | 'after-cr-create-before-ack' // the ModelService exists, the outbox row is not acknowledged
  | 'after-ack' // binding written, reservation delivered, row done
  | 'after-cr-delete-before-state' // the delete was accepted, the reservation is not releasing yet
  | 'after-releasing-before-release' // state releasing, the release transaction not started
  | 'inside-release-before-commit'; // release statements sent, COMMIT not

export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv = process.env): void {
  if (env.MODELDOCK_CRASH_AT !== point) return;
  process.stderr.write(`${JSON.stringify({ level: 'warn', msg: 'crash point reached: SIGKILL', point })}\n`);
  process.kill(process.pid, 'SIGKILL');
}
