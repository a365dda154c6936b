// MariaDB itself restarted mid-run. The suite runs on a MariaDB
// server of its own (test/support/private-mariadb.ts) so the shared one is never touched. While
// it is down the Worker answers 503 database_unavailable, the controller's ledger calls fail
// and back off (no crash, Lease kept); once it is back everything converges and no money is
// lost or doubled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLeading } from '../support/controller-process.ts';
import { holdOutage, probeRounds } from '../support/outage.ts';
import { startPrivateMariaDB, type PrivateMariaDB } from '../support/private-mariadb.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';

const DOWN_MS = 20_000;

let mariadb: PrivateMariaDB;
let sys: System;
let ctl: ControllerProcess;
const measured: Record<string, number> = {};
beforeAll(async () => {
  mariadb = await startPrivateMariaDB('mariadb-outage');
  sys = await startSystem({ quota: ['cpu=64', 'memory=256Gi', 'modelservices=1000'], database: mariadb.stack });
  ctl = await sys.startController('ctl-mariadb-restart');
});
afterAll(async () => {
  console.log(`[measure] MariaDB restart (ms): ${JSON.stringify(measured)}`);
  await sys?.stop();
  await mariadb?.stop();
});


describe('MariaDB restarted mid-run', () => {
  it('503 while it is down, the controller backs off and keeps its Lease, then everything converges, money intact', { timeout: 120_000 }, async () => {
    const early = await sys.admit(5);
    await sys.untilState(early, 'ready');
    const fresh = await sys.admit(10);
    for (const id of early) expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);

    const stoppedAt = await mariadb.stopServer();
    const answers = await probeRounds(sys, fresh[0]!, {
      until: stoppedAt + DOWN_MS - 5000,
      pauseMs: 1000,
      check: (round) => {
        for (const a of round) expect(a, a.route).toMatchObject({ status: 503, code: 'database_unavailable' });
      },
    });
    expect(answers.length).toBeGreaterThan(0); // the routes were probed while it was down
    measured.probes = answers.length;
    await holdOutage(DOWN_MS, stoppedAt); // down for DOWN_MS whatever the probes took
    expect(ctl.alive()).toBe(true);
    expect(await isLeading(ctl)).toBe(true);

    const upAt = await mariadb.startServer();
    measured.down = upAt - stoppedAt;
    await sys.untilState(fresh, 'ready', 60_000);
    await sys.untilState(early, 'released', 60_000);
    measured.upToConverged = Date.now() - upAt;
    expect(ctl.alive()).toBe(true);
    expect(await isLeading(ctl)).toBe(true);

    const all = [...early, ...fresh];
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE direction = 'charge' AND reservation_id IN (?)`, [all])).toBe(15);
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE direction = 'release' AND reservation_id IN (?)`, [early])).toBe(5);
    expect(await sys.ledger.count("SELECT COUNT(*) FROM reservation WHERE name LIKE 'probe%'")).toBe(0);
    await sys.untilSettled();
  });
});
