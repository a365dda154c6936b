// GET /quota: hard limits and the counter `used` (reserved) from tenant_quota, and the
// breakdown by reservation state from the reservations themselves (2 statements).
import { RESOURCE_NAMES, RESOURCE_UNITS } from '../../schema/model-service.ts';
import type { Quota } from '../../schema/api.ts';
import { readBreakdown, readQuota } from '../db/quota.ts';
import type { ServiceDeps } from './deps.ts';

export async function getQuota(deps: ServiceDeps, tenant: string): Promise<Quota> {
  const { quota } = await readQuota(deps.db, tenant);
  const b = await readBreakdown(deps.db, tenant);
  const resources = Object.fromEntries(
    RESOURCE_NAMES.map((r) => {
      const hard = quota[r]?.hard ?? 0;
      const reserved = quota[r]?.used ?? 0;
      return [
        r,
        {
          unit: RESOURCE_UNITS[r].unit,
          hard,
          reserved,
          active: b.active[r],
          releasing: b.releasing[r],
          blocked: b.blocked[r],
          conflict: b.conflict[r],
          available: Math.max(0, hard - reserved),
        },
      ];
    }),
  ) as Quota['resources'];
  return { tenant, resources };
}
