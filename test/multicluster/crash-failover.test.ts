// The crash matrix of a failover, on three real clusters (docs/multi-cluster.md "Crash points"): in
// each round c2's controller is killed and held down past the lease, while c1's and c3's controllers
// run with a crash point of the supervisor (the first to reach it SIGKILLs itself there; the other
// may as well). The dead are restarted, c2's admissions must end up ready on c1 or c3, moved once,
// each tenant's charge unchanged. Then c2's controller comes back with a crash point of its leftover
// cleanup; restarted, it frees c2's stranded room exactly once. The money checks hold at the instant
// of each crash; after each round the ledger and the three clusters agree, and every admission is
// released once.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerAnchors } from '../../ledger/anchors.ts';
import { readAllAllotments, readCluster } from '../../ledger/cluster-store.ts';
import type { CrashPoint } from '../../controller/runtime/crash.ts';
import { changeClusterState } from '../../scripts/operator/cluster-admin.ts';
import { checkLedger } from '../../scripts/operator/check.ts';
import { startFleet, type Fleet, type Member } from '../support/multicluster.ts';
import type { ApiBody } from '../support/tenant-api.ts';
import { waitFor } from '../support/wait.ts';

const TENANT = 'cf-a';
/** Long enough for a crashed supervisor's restart to take its own cluster over before its heartbeat runs out. */
const LEASE_MS = 10_000;
const CAPACITY = { cpu: 64_000, memory: 256 * 1024, 'nvidia.com/gpu': 0, modelservices: 8 };
const ADMISSIONS = 3;

const ROUNDS: Array<{ mover: CrashPoint; leftover: CrashPoint | null }> = [
  { mover: 'after-mark-lost', leftover: 'after-leftover-delete-before-free' },
  { mover: 'inside-move-before-commit', leftover: 'inside-free-stranded-before-commit' },
  { mover: 'after-move-before-create', leftover: null },
];

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({ tenants: [TENANT], capacity: CAPACITY, leaseMs: LEASE_MS });
});
afterAll(async () => fleet?.stop());

const crashEnv = (point: CrashPoint) => ({ MODELDOCK_CRASH_AT: point });
const diedAt = (m: Member, point: CrashPoint) => readFileSync(m.controller.proc.logFile, 'utf8').includes(`"msg":"crash point reached: SIGKILL","point":"${point}"`);
const moneyChecks = () => checkLedger(fleet.ledger.db, null, undefined);
const strandedOnC2 = async () => (await readAllAllotments(fleet.ledger.db, await ledgerAnchors(fleet.ledger.db), 'c2')).reduce((s, a) => s + a.stranded.modelservices, 0);
const admission = async (id: string) => (await fleet.api(TENANT, `/requests/${id}`)).body as ApiBody & { cluster: string; state: string };

describe('crash points of a failover', () => {
  for (const { mover, leftover } of ROUNDS) {
    it(`SIGKILL at ${mover}${leftover ? `, then at ${leftover}` : ''}: moved once, freed once, nothing lost or charged twice`, async () => {
      const [c1, c2, c3] = [fleet.member('c1'), fleet.member('c2'), fleet.member('c3')];
      const ids: string[] = [];
      for (let i = 0; i < ADMISSIONS; i++) ids.push(await fleet.admit(TENANT));
      await fleet.untilState(TENANT, ids, 'ready');
      const onC2: string[] = [];
      for (const id of ids) if ((await admission(id)).cluster === 'c2') onC2.push(id);
      expect(onC2.length).toBeGreaterThan(0); // least loaded: the clusters are empty at the start of a round
      const chargedBefore = (await fleet.api(TENANT, '/quota')).body.resources;

      // The supervisors of c1 and c3 carry the crash point; c2's controller dies and stays down.
      const supervisors = [c1, c3];
      for (const m of supervisors) {
        await m.controller.proc.stop();
        await fleet.startController(m, { env: crashEnv(mover) });
        await fleet.untilTakenOver(m);
      }
      process.kill(c2.controller.proc.pid, 'SIGKILL');
      await waitFor(`a supervisor to crash at ${mover}`, async () => (supervisors.some((m) => !m.controller.alive()) ? true : undefined), { timeoutMs: LEASE_MS + 30_000, intervalMs: 100 });
      const crashed = supervisors.filter((m) => !m.controller.alive());
      for (const m of crashed) expect(diedAt(m, mover), `${m.controller.name} died at ${mover}, not of something else`).toBe(true);
      expect(await moneyChecks()).toEqual([]); // at the instant of the crash

      for (const m of supervisors.filter((s) => !s.controller.alive())) await fleet.startController(m);
      await waitFor("c2's admissions ready on c1 or c3", async () => {
        for (const id of onC2) {
          const a = await admission(id);
          if (a.cluster === 'c2' || a.state !== 'ready') return undefined;
        }
        return true;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      expect((await readCluster(fleet.ledger.db, 'c2'))?.state).toBe('lost');
      expect((await fleet.api(TENANT, '/quota')).body.resources).toEqual(chargedBefore);
      for (const id of onC2) expect(await fleet.ledger.count("SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = 'move'", [id])).toBe(1);
      expect(await strandedOnC2()).toBe(onC2.length);

      // c2 back: its controller deletes the leftovers and frees the stranded room, once.
      if (leftover) {
        await fleet.startController(c2, { env: crashEnv(leftover), waitReady: false });
        await waitFor(`c2's controller to crash at ${leftover}`, async () => (!c2.controller.alive() ? true : undefined), { timeoutMs: 60_000, intervalMs: 100 });
        expect(diedAt(c2, leftover), `${c2.controller.name} died at ${leftover}, not of something else`).toBe(true);
        expect(await moneyChecks()).toEqual([]);
      }
      await fleet.startController(c2);
      await fleet.untilTakenOver(c2, 'lost');
      await waitFor("c2's stranded room freed", async () => ((await strandedOnC2()) === 0 ? true : undefined), { timeoutMs: 60_000 });
      for (const id of onC2) {
        expect(await fleet.ledger.count("SELECT COUNT(*) FROM placement WHERE reservation_id = ? AND cluster = 'c2' AND state = 'freed'", [id])).toBe(1);
      }
      const ctx = { db: fleet.ledger.db, actor: 'ops-cf', now: () => new Date() };
      expect(await changeClusterState(ctx, { name: 'c2', action: 'ready', reason: 'crash round' })).toMatchObject({ changed: true, from: 'lost' });
      await fleet.untilConsistent();

      // Each released once, by the cluster it runs on: charge, move (if it moved), release.
      await fleet.release(TENANT, ids);
      for (const id of ids) {
        const expected = onC2.includes(id) ? ['charge', 'move', 'release'] : ['charge', 'release'];
        const rows = await fleet.ledger.db.execute('SELECT direction FROM quota_movement WHERE reservation_id = ?', [id]);
        expect(rows.rows.map((r) => r.direction).sort()).toEqual([...expected].sort());
      }
      await fleet.untilConsistent();
    });
  }
});
