// How the controller process treats its ledger database: without DATABASE_URL, or without the
// image policy delivery needs (ALLOWED_IMAGE_REGISTRIES), it refuses to start (one line, non-zero
// exit) unless LEDGER=off; /readyz is true only while the informers
// are synced AND the database answers (`SELECT 1`, deadline 2 s, cached briefly); /healthz does
// not depend on the database.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClient, mintToken, tokenKubeconfig } from '../../scripts/testenv/install.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { startController, type ControllerProcess } from '../support/controller-process.ts';
import { installModelDock } from '../support/install.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { startTcpSwitch, type TcpSwitch } from '../support/tcp-switch.ts';
import { waitFor } from '../support/wait.ts';

const { core } = kubeClients();
let ns: { name: string; remove(): Promise<void> };
let ledger: LedgerDatabase;
let db: TcpSwitch;
const started: ControllerProcess[] = [];

beforeAll(async () => {
  ns = await createNamespace(core, 'ctl-ready');
  ledger = await createLedgerDatabase();
  const target = new URL(ledger.url);
  db = await startTcpSwitch(target.hostname, Number(target.port));
});
afterAll(async () => {
  await Promise.all(started.map((c) => c.proc.stop()));
  await db?.close();
  await ledger?.drop();
  await ns?.remove();
});

const probe = async (c: ControllerProcess, path: string) => {
  const res = await fetch(`http://127.0.0.1:${c.port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.text()).trim() };
};
/** Polls /readyz until it answers `want`; 503 (not ready) is expected on the way, any other 5xx is not. */
const untilReadyz = (c: ControllerProcess, want: number, what: string) =>
  waitFor(what, async (poll) => {
    const r = poll.answer(await probe(c, '/readyz'), 'GET /readyz');
    return r.status === want ? r : undefined;
  }, { allow5xx: [503] });

describe('the ledger database', () => {
  it('without DATABASE_URL (and without LEDGER=off) the controller exits non-zero with a one-line reason', async () => {
    const install = await installModelDock(ns.name);
    const run = promisify(execFile)(process.execPath, [join(repoRoot, 'controller/main.ts')], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, KUBECONFIG: install.kubeconfig, NAMESPACE: ns.name, METRICS_PORT: '0' },
      timeout: 30_000,
    });
    const err = (await run.then(() => undefined, (e: unknown) => e)) as { code?: number; stderr?: string; stdout?: string } | undefined;
    expect(err?.code).toBe(2);
    const lines = (err?.stderr ?? '').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: expect.stringMatching(/^exiting: DATABASE_URL is not set.*LEDGER=off/) });
    expect(err?.stdout).toBe('');
  });

  it('with the ledger but without ALLOWED_IMAGE_REGISTRIES (absent or empty) the controller exits non-zero with a one-line reason', async () => {
    const install = await installModelDock(ns.name);
    for (const registries of [{}, { ALLOWED_IMAGE_REGISTRIES: ' ' }]) {
      const run = promisify(execFile)(process.execPath, [join(repoRoot, 'controller/main.ts')], {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, KUBECONFIG: install.kubeconfig, NAMESPACE: ns.name, METRICS_PORT: '0', DATABASE_URL: ledger.url, ...registries },
        timeout: 30_000,
      });
      const err = (await run.then(() => undefined, (e: unknown) => e)) as { code?: number; stderr?: string } | undefined;
      expect(err?.code).toBe(2);
      const lines = (err?.stderr ?? '').trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: expect.stringMatching(/^exiting: ALLOWED_IMAGE_REGISTRIES is empty: .* or \* for any registry$/) });
    }
  });

  it('/readyz follows the database: 200 while it answers, 503 while it does not; /healthz stays 200', async () => {
    const url = new URL(ledger.url);
    url.host = `127.0.0.1:${db.port}`;
    const ctl = await startController('ctl-ready', ns.name, { DATABASE_URL: url.toString(), READY_DB_TTL_MS: '200', LEADER_ELECT: 'false' }, false);
    started.push(ctl);
    await untilReadyz(ctl, 200, '/readyz 200 (informers synced, database answering)');

    db.down();
    const down = await untilReadyz(ctl, 503, '/readyz 503 with the database gone');
    expect(down.body).toBe('database did not answer'); // short, no URL or credentials
    expect((await probe(ctl, '/healthz')).status).toBe(200);
    expect(ctl.alive()).toBe(true);

    db.up();
    await untilReadyz(ctl, 200, '/readyz 200 again');
  });

  it('/readyz is 503 while the informers cannot sync, even with the database answering', async () => {
    // The controller run as the namespace's `default` ServiceAccount, which has no RBAC: its lists are refused.
    const stack = inject('stack');
    const token = await mintToken(adminClient(stack.kubeconfig), ns.name, 'default', 3600);
    const kubeconfig = join(stack.runDir, 'installs', ns.name, 'default-sa.kubeconfig');
    mkdirSync(dirname(kubeconfig), { recursive: true }); // this test may run before the one that installs into ns
    writeFileSync(kubeconfig, tokenKubeconfig(stack.kubeconfig, `system:serviceaccount:${ns.name}:default`, token, ns.name), { mode: 0o600 });
    const ctl = await startController('ctl-unsynced', ns.name, { KUBECONFIG: kubeconfig, DATABASE_URL: ledger.url, LEADER_ELECT: 'false' }, false);
    started.push(ctl);
    // Its lists were tried and refused (403), so it will not become synced by waiting.
    await waitFor('a refused informer list', async () => /informer error; restarting.*403/.test(readFileSync(ctl.proc.logFile, 'utf8')));
    expect(await probe(ctl, '/readyz')).toEqual({ status: 503, body: 'caches not synced' });
    expect((await probe(ctl, '/healthz')).status).toBe(200);
    await ctl.proc.stop();
  });

  it('LEDGER=off: starts without a database and is ready once the informers synced', async () => {
    const ctl = await startController('ctl-ledger-off', ns.name, { LEADER_ELECT: 'false' }, false);
    started.push(ctl);
    await untilReadyz(ctl, 200, '/readyz 200');
    expect(ctl.alive()).toBe(true);
  });
});
