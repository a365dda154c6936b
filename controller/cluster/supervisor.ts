// The cluster supervisor (docs/multi-cluster.md T6, T7): every leader, of whichever cluster, looks
// once a second for clusters whose heartbeat is older than their lease and marks them lost
// (ledger/cluster-failover.ts: judged again under the row lock, on the database's clock; racing
// supervisors of other clusters are ordered by the lock and the epoch they saw). A lost cluster takes
// no new placements, and the same pass moves its running admissions to other clusters
// (ledger/failover-move.ts: one transaction each on the tenant's shard; supervisors racing for one
// admission are ordered by its row lock, and the placement they saw stops every one after the
// first). For its first GRACE_PASSES passes over a lost cluster, a supervisor moves only the
// admissions the placement policy sends to its own cluster, and wakes its own outbox poller, so each
// moved admission is created by a controller that has already heard of it; after that it moves any
// (the policy's cluster may have no controller running). Each supervisor takes the admissions in its
// own random order, so two of them mostly work on different ones.
import { Counter, type Registry } from 'prom-client';
import { clustersToLeave, markLost, overdueClusters, type Leaving, type MarkLost, type Overdue } from '../../ledger/cluster-failover.ts';
import { syncModes } from '../../ledger/cluster-store.ts';
import type { Db } from '../../ledger/db.ts';
import { movablePage, moveOne, type Movable, type MoveOutcome } from '../../ledger/failover-move.ts';
import type { Placer } from '../../ledger/placement.ts';
import { shardDb } from '../../ledger/shards.ts';
import { crashPoint } from '../runtime/crash.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/log.ts';

/** How often a leader looks for clusters whose heartbeat ran out (jittered by its loop). */
export const SUPERVISE_MS = 1_000;
/** The admissions a pass reads per shard and lost cluster, and the moves it makes at most (the rest: next pass). */
export const MOVES_PER_PASS = 100;
/** The passes over a lost cluster in which a supervisor moves only what the policy sends to its own cluster. */
export const GRACE_PASSES = 3;

export interface SupervisorLedger {
  overdue(signal: AbortSignal): Promise<Overdue[]>;
  markLost(c: Overdue, signal: AbortSignal): Promise<MarkLost>;
  /** The lost and forgotten clusters and their epochs: what runs there moves. */
  lost(signal: AbortSignal): Promise<Leaving[]>;
  /** Brings the cluster's shards to its state (a crash between `lost` and its shards left them behind); the rows changed. */
  followState(c: Leaving, signal: AbortSignal): Promise<number>;
  /** Running admissions placed on `cluster`, from every shard (at most `limit` per shard). */
  movable(cluster: string, limit: number, signal: AbortSignal): Promise<Movable[]>;
  /** `onlyTo`: move it only if the policy sends it to this cluster (null: wherever). */
  move(m: Movable, from: Leaving, onlyTo: string | null, signal: AbortSignal): Promise<MoveOutcome>;
}

export function supervisorLedger(db: Db, o: { runner: string; now: () => Date; placer: Placer }): SupervisorLedger {
  return {
    overdue: (signal) => overdueClusters(db.withSignal(signal)),
    markLost: (c, signal) =>
      markLost(db.withSignal(signal), { cluster: c.name, seenEpoch: c.epoch, runner: o.runner, now: o.now(), afterCommit: () => crashPoint('after-mark-lost') }),
    lost: (signal) => clustersToLeave(db.withSignal(signal)),
    async followState(c, signal) {
      const q = db.withSignal(signal);
      return syncModes(q, await o.placer.anchors(q), c, o.now());
    },
    async movable(cluster, limit, signal) {
      const q = db.withSignal(signal);
      // The shard list the placer already caches (the controller's one list).
      const pages = await Promise.all((await o.placer.anchors(q)).map((a) => movablePage(shardDb(q, a.shard.name), cluster, limit)));
      return pages.flat();
    },
    move: (m, from, onlyTo, signal) =>
      moveOne(db.withSignal(signal), o.placer, {
        ...m,
        from: from.name,
        lostEpoch: from.epoch,
        runner: o.runner,
        now: o.now(),
        onlyTo,
        beforeCommit: () => crashPoint('inside-move-before-commit'),
      }),
  };
}

export interface SupervisorMetrics {
  lost: Counter<'cluster'>;
  moved: Counter<'from' | 'to'>;
  noRoom: Counter<'cluster'>;
}

export function supervisorMetrics(registry: Registry): SupervisorMetrics {
  const registers = [registry];
  return {
    lost: new Counter({ name: 'modeldock_cluster_lost_total', help: 'Clusters this controller marked lost (their heartbeat older than their lease).', labelNames: ['cluster'], registers }),
    moved: new Counter({ name: 'modeldock_failover_moves_total', help: 'Admissions this controller moved off a lost cluster (charge and room moved with them).', labelNames: ['from', 'to'], registers }),
    noRoom: new Counter({
      name: 'modeldock_failover_no_room_total',
      help: 'Moves off a lost cluster that found no open cluster with room (the admission stays; tried again next pass).',
      labelNames: ['cluster'],
      registers,
    }),
  };
}

export interface SupervisePass {
  /** The clusters this pass marked lost. */
  marked: string[];
  /** The admissions it moved, with their new cluster. */
  moved: Array<{ id: string; to: string }>;
}

export interface SupervisorOptions {
  ledger: SupervisorLedger;
  metrics: SupervisorMetrics;
  log: Logger;
  /** The cluster this controller serves: what the grace passes move, and where onMoved wakes the poller. */
  ownCluster: string;
  /** Hears of every move (the caller wakes its outbox poller when the move came its way). */
  onMoved?: (to: string) => void;
  /** Orders the admissions of a pass (default Math.random). */
  random?: () => number;
}

/**
 * The supervisor's passes (one per call): every overdue cluster marked lost, then the running
 * admissions of every lost cluster moved (each on its own: one that fails is tried again next pass).
 */
export function createSupervisor(o: SupervisorOptions): (signal: AbortSignal) => Promise<SupervisePass> {
  const { ledger, metrics, log } = o;
  /** Per lost cluster, the passes this supervisor has seen it lost in. */
  const lostPasses = new Map<string, number>();
  return async (signal) => {
    const pass: SupervisePass = { marked: [], moved: [] };
    for (const c of await ledger.overdue(signal)) {
      try {
        const r = await ledger.markLost(c, signal);
        if (r.kind !== 'lost') continue;
        metrics.lost.inc({ cluster: c.name });
        pass.marked.push(c.name);
        log.warn('cluster marked lost: no heartbeat within its lease', { cluster: c.name, epoch: r.epoch, heartbeatAgeMs: r.heartbeatAgeMs });
      } catch (err) {
        signal.throwIfAborted();
        log.warn('marking a cluster lost failed: retried next pass', { cluster: c.name, err: errorMessage(err) });
      }
    }
    const lost = await ledger.lost(signal);
    for (const name of lostPasses.keys()) if (!lost.some((c) => c.name === name)) lostPasses.delete(name);
    for (const from of lost) {
      // A shard still open to it moves nothing: every pass brings them along (a shard already there is not written).
      const followed = await ledger.followState(from, signal);
      if (followed > 0) log.warn("a lost cluster's shards brought to its state: a crash had left them behind", { cluster: from.name, state: from.state, shards: followed });
      const passes = (lostPasses.get(from.name) ?? 0) + 1;
      lostPasses.set(from.name, passes);
      const onlyTo = passes <= GRACE_PASSES ? o.ownCluster : null;
      const page = shuffled(await ledger.movable(from.name, MOVES_PER_PASS, signal), o.random ?? Math.random);
      let noRoom = 0;
      for (const m of page.slice(0, MOVES_PER_PASS - pass.moved.length)) {
        try {
          const r = await ledger.move(m, from, onlyTo, signal);
          if (r.kind === 'no-room') {
            metrics.noRoom.inc({ cluster: from.name });
            noRoom++;
            continue;
          }
          if (r.kind !== 'moved') continue;
          crashPoint('after-move-before-create');
          metrics.moved.inc({ from: from.name, to: r.to });
          pass.moved.push({ id: m.id, to: r.to });
          log.info('admission moved off a lost cluster', { from: from.name, to: r.to, tenant: m.tenant, admissionId: m.id, placement: r.seq });
          o.onMoved?.(r.to);
        } catch (err) {
          signal.throwIfAborted();
          log.warn('moving an admission off a lost cluster failed: retried next pass', { cluster: from.name, tenant: m.tenant, admissionId: m.id, err: errorMessage(err) });
        }
      }
      if (noRoom > 0) log.warn('admissions of a lost cluster stay: no open cluster has room for them (tried again next pass)', { cluster: from.name, admissions: noRoom });
    }
    return pass;
  };
}

/** Fisher–Yates with the given random source. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
