// The cluster supervisor (docs/multi-cluster.md T6): every leader, of whichever cluster, looks once a
// second for clusters whose heartbeat is older than their lease and marks them lost
// (ledger/cluster-failover.ts: judged again under the row lock, on the database's clock; racing
// supervisors of other clusters are ordered by the lock and the epoch they saw). A lost cluster takes
// no new placements. Moving its admissions elsewhere is not built yet (T7).
import { Counter, type Registry } from 'prom-client';
import { markLost, overdueClusters, type MarkLost, type Overdue } from '../../ledger/cluster-failover.ts';
import type { Db } from '../../ledger/db.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/log.ts';

/** How often a leader looks for clusters whose heartbeat ran out (jittered by its loop). */
export const SUPERVISE_MS = 1_000;

export interface SupervisorLedger {
  overdue(signal: AbortSignal): Promise<Overdue[]>;
  markLost(c: Overdue, signal: AbortSignal): Promise<MarkLost>;
}

export function supervisorLedger(db: Db, o: { runner: string; now: () => Date }): SupervisorLedger {
  return {
    overdue: (signal) => overdueClusters(db.withSignal(signal)),
    markLost: (c, signal) => markLost(db.withSignal(signal), { cluster: c.name, seenEpoch: c.epoch, runner: o.runner, now: o.now() }),
  };
}

export function supervisorMetrics(registry: Registry): Counter<'cluster'> {
  return new Counter({ name: 'modeldock_cluster_lost_total', help: 'Clusters this controller marked lost (their heartbeat older than their lease).', labelNames: ['cluster'], registers: [registry] });
}

/** One pass: every overdue cluster marked lost (each on its own; one that fails is tried again next pass). Returns the clusters it marked. */
export async function supervise(ledger: SupervisorLedger, lost: Counter<'cluster'>, log: Logger, signal: AbortSignal): Promise<string[]> {
  const marked: string[] = [];
  for (const c of await ledger.overdue(signal)) {
    try {
      const r = await ledger.markLost(c, signal);
      if (r.kind !== 'lost') continue;
      lost.inc({ cluster: c.name });
      marked.push(c.name);
      log.warn('cluster marked lost: no heartbeat within its lease', { cluster: c.name, epoch: r.epoch, heartbeatAgeMs: r.heartbeatAgeMs });
    } catch (err) {
      signal.throwIfAborted();
      log.warn('marking a cluster lost failed: retried next pass', { cluster: c.name, err: errorMessage(err) });
    }
  }
  return marked;
}
