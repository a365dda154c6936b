// A HUNG database, end to end on the real stack. The suite's own ps-http-sim
// (nobody else's) is frozen with SIGSTOP for 60 s — connections are accepted, nothing answers —
// while deliveries and deletions are in flight:
//  - the Worker answers every route 503 database_unavailable within its deadline
//    (DB_TIMEOUT_MS, default 5 s), while the database is still frozen;
//  - the controller's ledger calls time out and back off; it neither crashes nor loses its Lease;
//  - after SIGCONT everything converges: all ready or released, charged once, released once.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFrozen, isLeading } from '../support/controller-process.ts';
import { holdOutage, probeRounds } from '../support/outage.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

const FREEZE_MS = 60_000;
const WORKER_DB_TIMEOUT_MS = 5000; // the production default (functions/config.ts), set explicitly

let sys: System;
let ctl: ControllerProcess;
const measured: Record<string, number> = {};
beforeAll(async () => {
  sys = await startSystem({ quota: ['cpu=64', 'memory=256Gi', 'modelservices=1000'], workerVars: { DB_TIMEOUT_MS: String(WORKER_DB_TIMEOUT_MS) } });
  ctl = await sys.startController('ctl-db-freeze');
});
afterAll(async () => {
  console.log(`[measure] hung database (ms): ${JSON.stringify(measured)}`);
  await sys?.stop();
});


describe('hung database (ps-http-sim frozen with SIGSTOP)', () => {
  it('the Worker answers 503 within its deadline, the controller backs off and keeps its Lease, then everything converges', { timeout: 170_000 }, async () => {
    const early = await sys.admit(5);
    await sys.untilState(early, 'ready');
    const fresh = await sys.admit(10);
    for (const id of early) expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    const logFrom = readFileSync(ctl.proc.logFile, 'utf8').length;

    const sim = sys.ledger.sim?.pid;
    if (sim === undefined) throw new Error('this suite freezes the ps-http-sim of its own database (MariaDB backend only)');
    process.kill(sim, 'SIGSTOP');
    const frozenAt = Date.now();
    try {
      await waitFor('ps-http-sim to be stopped', async () => isFrozen(sim), { timeoutMs: 5000, intervalMs: 20 });
      // Probe every route, round after round, for as long as the freeze lasts (less one round).
      const answers = await probeRounds(sys, fresh[0]!, {
        until: frozenAt + FREEZE_MS - 2 * WORKER_DB_TIMEOUT_MS,
        check: (round) => {
          for (const a of round) expect(a, a.route).toMatchObject({ status: 503, code: 'database_unavailable' });
          expect(isFrozen(sim)).toBe(true); // every answer came while the database was still hung
        },
      });
      expect(answers.length).toBeGreaterThan(0); // else the slowest below would be -Infinity, the check vacuous
      const slowest = Math.max(...answers.map((a) => a.ms));
      measured.probes = answers.length;
      measured.slowest503 = slowest;
      // Without its deadline a call would wait for the whole freeze; with it, about DB_TIMEOUT_MS.
      expect(slowest).toBeLessThan(2 * WORKER_DB_TIMEOUT_MS);
      await holdOutage(FREEZE_MS, frozenAt); // the freeze lasts FREEZE_MS whatever the probes took

      // The controller: its ledger calls timed out (30 s deadline) and it is alive and still leading.
      const log = readFileSync(ctl.proc.logFile, 'utf8').slice(logFrom);
      expect(log).toMatch(/database unreachable: .*(timeout|aborted)/i);
      expect(ctl.alive()).toBe(true);
      expect(await isLeading(ctl)).toBe(true);
    } finally {
      process.kill(sim, 'SIGCONT');
    }
    const thawedAt = Date.now();
    measured.frozen = thawedAt - frozenAt;

    await sys.untilState(fresh, 'ready', 60_000);
    await sys.untilState(early, 'released', 60_000);
    measured.thawToConverged = Date.now() - thawedAt;
    expect(ctl.alive()).toBe(true); // the same process, never restarted
    expect(await isLeading(ctl)).toBe(true);

    // No money lost or doubled: one charge each, one release for each deleted admission, and no
    // probe admission made while the database was hung.
    const all = [...early, ...fresh];
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE direction = 'charge' AND reservation_id IN (?)`, [all])).toBe(15);
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE direction = 'release' AND reservation_id IN (?)`, [early])).toBe(5);
    expect(await sys.ledger.count("SELECT COUNT(*) FROM reservation WHERE name LIKE 'probe%'")).toBe(0);
    await sys.untilSettled();
  });
});
