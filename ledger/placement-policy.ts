// Where an admission goes, pure (docs/multi-cluster.md "Placement policy"): the policies rank a shard's
// view of the clusters (its allotment rows) for one admission's amounts. The charging transaction
// then reserves room on the first ranked cluster (ledger/placement.ts); the room check itself is the
// guarded UPDATE there, so a policy can only cost balance, never correctness.
import type { Amounts } from '../schema/model-service.ts';
import type { AllotmentMode } from './clusters.ts';
import { amountsOf, RESOURCE_NAMES, type ResourceName } from './resources.ts';

/** One cluster's room on the tenant's shard: its allotment row. */
export interface ClusterRoom {
  cluster: string;
  mode: AllotmentMode;
  allotted: Amounts;
  reserved: Amounts;
  stranded: Amounts;
}

export interface PlacementInput {
  want: Amounts;
  /** The shard's allotment rows, one per registered cluster. */
  rooms: readonly ClusterRoom[];
  /** The tenant's preferred clusters, best first (`tenant_affinity`; [] unless the policy reads it). */
  affinity: readonly string[];
}

/** One open cluster in a policy's order: whether its room on this shard fits the admission now. */
export interface Ranked {
  cluster: string;
  fits: boolean;
}

export interface PlacementPolicy {
  readonly name: string;
  /** Whether admission must read the tenant's `tenant_affinity` rows for it. */
  readonly readsAffinity: boolean;
  /**
   * The open clusters, best first. Placement takes the first that fits; a cluster ranked before it
   * that does not fit is first offered more room (the slow path: its pool), so a policy that puts a
   * cluster first whatever its room (affinity) borrows for it before going elsewhere.
   */
  rank(i: PlacementInput): Ranked[];
}

/** What the room has left of a resource: allotted − reserved − stranded. */
export const freeOf = (room: ClusterRoom, r: ResourceName): number => room.allotted[r] - room.reserved[r] - room.stranded[r];

/** What the room lacks for `want`, per resource (0 where it has enough). */
export const roomShortfall = (room: ClusterRoom, want: Amounts): Amounts => amountsOf((r) => Math.max(0, want[r] - freeOf(room, r)));

/** Whether the room takes `want` on top of what is reserved and stranded, for every resource. */
export const roomFits = (room: ClusterRoom, want: Amounts): boolean => RESOURCE_NAMES.every((r) => want[r] <= freeOf(room, r));

/**
 * The room's dominant share after placing `want`: max over the wanted resources of
 * (reserved + stranded + want) / allotted. Infinity where a wanted resource has nothing allotted.
 */
export function shareAfter(room: ClusterRoom, want: Amounts): number {
  let share = 0;
  for (const r of RESOURCE_NAMES) {
    const used = room.reserved[r] + room.stranded[r] + want[r];
    if (used === 0) continue;
    share = Math.max(share, room.allotted[r] > 0 ? used / room.allotted[r] : Infinity);
  }
  return share;
}

const ranked = (i: PlacementInput, order: (a: Ranked & ClusterRoom, b: Ranked & ClusterRoom) => number): Ranked[] =>
  i.rooms
    .filter((r) => r.mode === 'open')
    .map((r) => ({ ...r, fits: roomFits(r, i.want) }))
    .sort(order)
    .map((r) => ({ cluster: r.cluster, fits: r.fits }));

const byShare = (want: Amounts) => (a: ClusterRoom, b: ClusterRoom) => shareAfter(a, want) - shareAfter(b, want) || (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0);

/** Those that fit first, each part by the lowest dominant share after placement, ties by name: it borrows only when no cluster fits. */
const leastLoaded: PlacementPolicy = {
  name: 'least-loaded',
  readsAffinity: false,
  rank: (i) => {
    const shares = byShare(i.want);
    return ranked(i, (a, b) => Number(b.fits) - Number(a.fits) || shares(a, b));
  },
};

/** The tenant's clusters in its order, whatever their room (it borrows for them first), then the rest as least-loaded ranks them. */
const affinity: PlacementPolicy = {
  name: 'affinity',
  readsAffinity: true,
  rank: (i) => {
    const rankOf = (c: string) => {
      const k = i.affinity.indexOf(c);
      return k < 0 ? i.affinity.length : k;
    };
    const shares = byShare(i.want);
    return ranked(i, (a, b) => rankOf(a.cluster) - rankOf(b.cluster) || Number(b.fits) - Number(a.fits) || shares(a, b));
  },
};

export const PLACEMENT_POLICIES: Readonly<Record<string, PlacementPolicy>> = { [leastLoaded.name]: leastLoaded, [affinity.name]: affinity };

export const DEFAULT_PLACEMENT_POLICY = leastLoaded.name;

/** The policy named by `PLACEMENT_POLICY`; an unknown name stops startup. */
export function placementPolicy(name: string | undefined): PlacementPolicy {
  const p = PLACEMENT_POLICIES[name ?? DEFAULT_PLACEMENT_POLICY];
  if (!p) throw new Error(`PLACEMENT_POLICY "${name}" is not one of ${Object.keys(PLACEMENT_POLICIES).join(', ')}`);
  return p;
}
