// This leader's fence (docs/design.md, "Fencing"): the epoch, acquired once per leadership (the
// takeover bumps controller_epoch and raises every tenant's fence row of this controller's
// cluster, shard by shard), and the fence rows of tenants met since (a tenant created after the takeover has none yet): raised
// once per tenant, before this leader reads or writes anything of that tenant.
import type { Db } from '../../ledger/db.ts';
import type { Logger } from '../runtime/log.ts';
import { acquireEpoch, ensureFence } from './leader-epoch.ts';

export interface LeaderFence {
  /** The cluster this leader serves: its fence rows are this cluster's. */
  readonly cluster: string;
  /** This leader's epoch (the takeover runs on first use). */
  epoch(): Promise<number>;
  /** The epoch, once each tenant's fence row has been raised to it by this leader. */
  forTenants(tenants: readonly string[]): Promise<number>;
}

export function leaderFence(o: { db: Db; cluster: string; holder: string; now: () => Date; log: Logger }): LeaderFence {
  let acquired: Promise<number> | undefined;
  const raised = new Map<string, Promise<void>>();
  const epoch = (): Promise<number> =>
    (acquired ??= acquireEpoch(o.db, o.cluster, o.holder, o.now()).then(
      (e) => {
        o.log.info('controller epoch acquired', { epoch: e, cluster: o.cluster });
        return e;
      },
      (err: unknown) => {
        acquired = undefined;
        throw err;
      },
    ));
  const raise = (tenant: string, e: number): Promise<void> => {
    let p = raised.get(tenant);
    if (!p) {
      p = ensureFence(o.db, tenant, o.cluster, e, o.holder, o.now()).catch((err: unknown) => {
        raised.delete(tenant); // not raised: the next call tries again
        throw err;
      });
      raised.set(tenant, p);
    }
    return p;
  };
  return {
    cluster: o.cluster,
    epoch,
    async forTenants(tenants) {
      const e = await epoch();
      await Promise.all(tenants.map((t) => raise(t, e)));
      return e;
    },
  };
}
