// The crash matrix: for every named crash point, a controller is SIGKILLed the moment it reaches
// that point while it delivers a batch of admissions and carries out a batch of deletions. A new
// controller then converges, and the ledger invariants must hold: exactly one CR per delivered
// admission, every reservation charged once and released at most once, tenant usage equal to the
// sum over non-released reservations, no CR without a live reservation, no released reservation
// with pods left. The money invariants are also checked right after the crash, before recovery.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../controller/runtime/crash.ts';
import { startSystem, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

const POINTS: CrashPoint[] = [
  'after-claim',
  'after-cr-create-before-ack',
  'inside-ack-before-commit',
  'after-ack',
  'after-cr-delete-before-state',
  'after-releasing-before-release',
  'inside-release-before-commit',
];
const BATCH = 3;

let sys: System;
const convergence: Record<string, number> = {};
beforeAll(async () => {
  sys = await startSystem({ quota: ['cpu=64', 'memory=256Gi', 'modelservices=1000'] });
});
afterAll(async () => {
  console.log(`[measure] convergence after restart (ms): ${JSON.stringify(convergence)}`);
  await sys?.stop();
});

describe('crash matrix', () => {
  for (const point of POINTS) {
    it(`SIGKILL at ${point}: nothing lost, nothing charged twice`, async () => {
      // Admissions that this round will delete.
      const warm = await sys.startController(`ctl-${point}-warm`);
      const early = await sys.admit(BATCH);
      await sys.untilState(early, 'ready');
      await warm.proc.stop(); // graceful: releases the lease

      const crashy = await sys.startController(`ctl-${point}`, { MODELDOCK_CRASH_AT: point });
      const fresh = await sys.admit(BATCH);
      for (const id of early) expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
      await waitFor(`the controller to crash at ${point}`, async () => !crashy.alive(), { timeoutMs: 60_000 });
      expect(readFileSync(crashy.proc.logFile, 'utf8')).toContain(`"msg":"crash point reached: SIGKILL","point":"${point}"`); // died there, not of something else
      expect(await sys.check(false)).toEqual([]); // money invariants hold at the instant of the crash

      const t0 = Date.now();
      const healer = await sys.startController(`ctl-${point}-heal`);
      await sys.untilState(fresh, 'ready');
      await sys.untilState(early, 'released');
      convergence[point] = Date.now() - t0;
      await sys.untilSettled();
      for (const id of early) {
        expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ?`, [id])).toBe(2);
      }
      await healer.proc.stop(); // the next round's controllers must be able to lead
    });
  }
});

// The crash points of a change of replicas (PATCH /requests/:id). The Worker's own point — after
// the charge commit, its reply lost — is test/integration/admission-workerd-ledger.test.ts (the
// Worker in workerd behind a proxy that loses the COMMIT reply) and admission-scale.test.ts: a
// retry with the same Idempotency-Key finds the change, nothing is charged twice.
const SCALE_POINTS: Array<{ point: CrashPoint; from: number; to: number; movements: string[] }> = [
  { point: 'after-cr-scale-before-ack', from: 1, to: 2, movements: ['1:charge', '2:charge'] },
  { point: 'inside-refund-before-commit', from: 2, to: 1, movements: ['1:charge', '2:refund'] },
];

describe('crash matrix: changes of replicas', () => {
  for (const { point, from, to, movements } of SCALE_POINTS) {
    it(`SIGKILL at ${point}: the change is applied once, charged or refunded once`, async () => {
      const warm = await sys.startController(`ctl-${point}-warm`);
      const ids = await sys.admit(BATCH, { replicas: from });
      await sys.untilState(ids, 'ready');
      await warm.proc.stop();

      const crashy = await sys.startController(`ctl-${point}`, { MODELDOCK_CRASH_AT: point });
      for (const id of ids) {
        const r = await sys.api(`/requests/${id}`, { method: 'PATCH', body: { replicas: to }, idempotencyKey: `${point}-${id}` });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
      }
      await waitFor(`the controller to crash at ${point}`, async () => !crashy.alive(), { timeoutMs: 60_000 });
      expect(readFileSync(crashy.proc.logFile, 'utf8')).toContain(`"msg":"crash point reached: SIGKILL","point":"${point}"`); // died there, not of something else
      expect(await sys.check(false)).toEqual([]); // money invariants hold at the instant of the crash

      const t0 = Date.now();
      const healer = await sys.startController(`ctl-${point}-heal`);
      await sys.untilAll('every change settled', ids, (a) => a.pendingChange === null && a.chargedReplicas === to, { timeoutMs: 90_000 });
      convergence[point] = Date.now() - t0;
      await sys.untilSettled();
      for (const id of ids) {
        const rows = await sys.ledger.db.execute('SELECT generation, direction FROM quota_movement WHERE reservation_id = ? ORDER BY generation, direction', [id]);
        expect(rows.rows.map((m) => `${Number(m.generation)}:${String(m.direction)}`)).toEqual(movements);
      }
      await healer.proc.stop();
    });
  }
});
