// The crash matrix: for every named crash point, a controller is SIGKILLed the moment it reaches
// that point while it delivers a batch of admissions and carries out a batch of deletions. A new
// controller then converges, and the ledger invariants must hold: exactly one CR per delivered
// admission, every reservation charged once and released at most once, tenant usage equal to the
// sum over non-released reservations, no CR without a live reservation, no released reservation
// with pods left. The money invariants are also checked right after the crash, before recovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../controller/runtime/crash.ts';
import { startSystem, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

const POINTS: CrashPoint[] = [
  'after-claim',
  'after-cr-create-before-ack',
  'after-ack',
  'after-cr-delete-before-state',
  'after-releasing-before-release',
  'inside-release-before-commit',
];
const BATCH = 3;

let sys: System;
const convergence: Record<string, number> = {};
beforeAll(async () => {
  sys = await startSystem({ quota: ['cpu=64', 'memory=256Gi'] });
});
afterAll(async () => {
  console.log(`[measure] convergence after restart (ms): ${JSON.stringify(convergence)}`);
  await sys?.stop();
});

let n = 0;
async function admitMany(count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const i = ++n;
      const r = await sys.api('/requests', {
        method: 'POST',
        body: { name: `c${i}`, image: 'ghcr.io/acme/model:1', replicas: 1, resources: { cpu: '100m', memory: '128Mi' } },
        idempotencyKey: `crash-${i}`,
      });
      expect(r.status).toBe(201);
      return r.body.id as string;
    }),
  );
}
const stateOf = async (id: string) => (await sys.api(`/requests/${id}`)).body.state as string;
const allIn = (ids: string[], want: string, timeoutMs = 90_000) =>
  waitFor(`${ids.length} admissions → ${want}`, async () => (await Promise.all(ids.map(stateOf))).every((s) => s === want), { timeoutMs });

describe('crash matrix', () => {
  for (const point of POINTS) {
    it(`SIGKILL at ${point}: nothing lost, nothing charged twice`, async () => {
      // Admissions that this round will delete.
      const warm = await sys.startController(`ctl-${point}-warm`);
      const early = await admitMany(BATCH);
      await allIn(early, 'ready');
      await warm.proc.stop(); // graceful: releases the lease

      const crashy = await sys.startController(`ctl-${point}`, { MODELDOCK_CRASH_AT: point });
      const fresh = await admitMany(BATCH);
      for (const id of early) expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
      await waitFor(`the controller to crash at ${point}`, async () => !crashy.alive(), { timeoutMs: 60_000 });
      expect(await sys.check(false)).toEqual([]); // money invariants hold at the instant of the crash

      const t0 = Date.now();
      const healer = await sys.startController(`ctl-${point}-heal`);
      await allIn(fresh, 'ready');
      await allIn(early, 'released');
      convergence[point] = Date.now() - t0;
      await waitFor('the cluster to settle', async () => (await sys.check()).length === 0, { timeoutMs: 30_000 }).catch(async () => {
        expect(await sys.check()).toEqual([]);
      });
      for (const id of early) {
        expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ?`, [id])).toBe(2);
      }
      await healer.proc.stop(); // the next round's controllers must be able to lead
    });
  }
});
