// The decisions about clusters, pure (docs/multi-cluster.md): their states and what an operator may
// do in each, the mode a state gives a shard's allotment, and how `add` spreads a new cluster's
// capacity over the pool and the shards' anchors. The transactions that carry them out are
// ledger/cluster-store.ts and ledger/allotment-moves.ts.
import type { Amounts } from '../schema/model-service.ts';
import { amountsOf, RESOURCE_NAMES } from './resources.ts';

/** The cluster of every admission while none is registered (the column default of migration 0013). */
export const UNREGISTERED_CLUSTER = 'default';

export const CLUSTER_STATES = ['joining', 'ready', 'draining', 'lost', 'forgotten'] as const;
export type ClusterState = (typeof CLUSTER_STATES)[number];

/** A shard's allotment of a cluster, as the cluster's state makes it: only `open` takes new placements. */
export type AllotmentMode = 'closed' | 'open' | 'draining' | 'lost' | 'forgotten';

export const MODE_OF_STATE: Readonly<Record<ClusterState, AllotmentMode>> = {
  joining: 'closed',
  ready: 'open',
  draining: 'draining',
  lost: 'lost',
  forgotten: 'forgotten',
};

export function clusterState(v: string): ClusterState {
  if (!(CLUSTER_STATES as readonly string[]).includes(v)) throw new Error(`unknown cluster state ${v}`);
  return v as ClusterState;
}

/** Cluster names are DNS labels, like tenant names (so `~`, an anchor's first character, never is one). */
export const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const notAClusterName = (name: string): string => `"${name}" is not a cluster name (a DNS label: lowercase letters, digits and '-', at most 63)`;

/** An operator's state change (`npm run cluster -- drain|ready`). */
export type OperatorAction = 'drain' | 'ready';

export type TransitionDecision =
  | { kind: 'change'; to: ClusterState }
  | { kind: 'unchanged' }
  | { kind: 'refused'; reason: string };

/** What the operator's `ready` needs to know of a lost cluster before it may take placements again. */
export interface ReadyFacts {
  /** Whether the cluster's controller heartbeat is younger than its lease (the database's clock). */
  heartbeatFresh: boolean;
  /** Capacity still stranded on the cluster, over every shard. */
  strandedAny: boolean;
}

/**
 * The operator's `drain` and `ready`. drain: ready → draining (no new placements; what runs there
 * stays). ready: draining → ready; lost → ready only once its controller is back (fresh heartbeat)
 * and nothing is stranded. No change bumps the cluster's epoch: the controller that came back took
 * the cluster over at a new epoch already and keeps serving it (a bump would supersede it, and its
 * restart, longer than the lease, would find the cluster lost again). A joining cluster becomes
 * ready at its controller's first takeover, never by the operator; a forgotten one only by a re-add.
 */
export function operatorTransition(action: OperatorAction, from: ClusterState, facts: ReadyFacts): TransitionDecision {
  if (action === 'drain') {
    if (from === 'draining') return { kind: 'unchanged' };
    if (from === 'ready') return { kind: 'change', to: 'draining' };
    return { kind: 'refused', reason: `a ${from} cluster cannot be drained (only a ready one)` };
  }
  switch (from) {
    case 'ready':
      return { kind: 'unchanged' };
    case 'draining':
      return { kind: 'change', to: 'ready' };
    case 'lost':
      if (!facts.heartbeatFresh) return { kind: 'refused', reason: 'lost: its controller has not sent a heartbeat within the lease' };
      if (facts.strandedAny) return { kind: 'refused', reason: 'lost: capacity is still stranded on it (its controller frees it once the old pods are gone)' };
      return { kind: 'change', to: 'ready' };
    case 'joining':
      return { kind: 'refused', reason: 'joining: it becomes ready when its controller first takes it over' };
    case 'forgotten':
      return { kind: 'refused', reason: 'forgotten: add it again' };
  }
}

/** What a controller's takeover of its cluster does (ledger/cluster-epoch.ts): always a new epoch. */
/** What `forget` needs to know of a draining cluster: whether any shard still holds room on it. */
export interface ForgetFacts {
  reservedAny: boolean;
  strandedAny: boolean;
}

/**
 * The operator's `forget` (docs/multi-cluster.md T10): lost → forgotten (the operator vouches that
 * nothing of it runs any more: its stranded room is given up, what runs there moves); draining →
 * forgotten only with nothing reserved or stranded on it; forgotten: unchanged (a re-run finishes
 * the shards). A ready or joining cluster is drained first. The caller bumps the epoch: the
 * cluster's controller, if one still runs, is superseded and cannot take it over again.
 */
export function forgetTransition(from: ClusterState, facts: ForgetFacts): TransitionDecision {
  switch (from) {
    case 'forgotten':
      return { kind: 'unchanged' };
    case 'lost':
      return { kind: 'change', to: 'forgotten' };
    case 'draining':
      if (facts.reservedAny || facts.strandedAny) return { kind: 'refused', reason: 'draining: admissions still hold room on it (forget it once they are released, or once it is lost)' };
      return { kind: 'change', to: 'forgotten' };
    case 'ready':
    case 'joining':
      return { kind: 'refused', reason: `a ${from} cluster is not forgotten: drain it first` };
  }
}

export type TakeoverDecision = { kind: 'take'; to: ClusterState; joined: boolean } | { kind: 'refused'; reason: string };

/**
 * A controller taking its cluster over: a joining cluster becomes ready (its first takeover is what
 * makes it ready, never the operator); any other keeps its state (a draining one stays draining, a
 * lost one stays lost until the operator's `ready`); a forgotten one is refused (add it again).
 */
export function takeoverTransition(from: ClusterState): TakeoverDecision {
  if (from === 'forgotten') return { kind: 'refused', reason: 'forgotten: add it again (npm run cluster -- add)' };
  return from === 'joining' ? { kind: 'take', to: 'ready', joined: true } : { kind: 'take', to: from, joined: false };
}

/** What the supervisor knows of a cluster when it judges it lost: its row, and its heartbeat's age by the database's clock. */
export interface LostFacts {
  state: ClusterState;
  epoch: number;
  leaseMs: number;
  /** Milliseconds since its last heartbeat (null: it never sent one). */
  heartbeatAgeMs: number | null;
}

/**
 * The supervisor's `lost` (docs/multi-cluster.md T6): a ready or draining cluster whose heartbeat is
 * older than its lease, still at the epoch the supervisor saw (a takeover since then is a controller
 * that came back), is lost, with a new epoch (its controller's next heartbeat finds it superseded).
 * A joining cluster never had a controller and is never lost; a heartbeat younger than the lease
 * changes nothing (no false failover).
 */
export function lostTransition(c: LostFacts, seenEpoch: number): { kind: 'lose'; epoch: number } | { kind: 'unchanged'; why: string } {
  if (c.state !== 'ready' && c.state !== 'draining') return { kind: 'unchanged', why: `it is ${c.state}` };
  if (c.epoch !== seenEpoch) return { kind: 'unchanged', why: `taken over since (epoch ${c.epoch}, seen ${seenEpoch})` };
  if (c.heartbeatAgeMs === null || c.heartbeatAgeMs <= c.leaseMs) return { kind: 'unchanged', why: 'its heartbeat is within the lease' };
  return { kind: 'lose', epoch: c.epoch + 1 };
}

export interface Spread {
  /** What the pool keeps. */
  pool: Amounts;
  /** What each anchor is granted, in the anchors' order (one per shard). */
  grants: Amounts[];
}

/**
 * How `add` spreads a cluster's capacity: one shard (MariaDB) is granted everything, so its
 * allotment check is the check of the whole capacity; n ≥ 2 shards are each granted ⌊75 % / n⌋ of
 * each resource and the pool keeps the rest (at least 25 %), for the shard whose tenants need more.
 */
export function spreadCapacity(capacity: Amounts, shards: number): Spread {
  if (shards < 1) throw new Error('no shard to spread over');
  if (shards === 1) return { pool: amountsOf(() => 0), grants: [{ ...capacity }] };
  const each = amountsOf((r) => Math.floor((capacity[r] * 3) / (4 * shards)));
  const pool = amountsOf((r) => capacity[r] - each[r] * shards);
  return { pool, grants: Array.from({ length: shards }, () => ({ ...each })) };
}

/** True when some resource of `a` is above zero. */
export const anyPositive = (a: Amounts): boolean => RESOURCE_NAMES.some((r) => a[r] > 0);
