// A tenant's hostile termination message, on real containers: the model writes 4 KiB — a few
// terminal controls (an OSC title, a screen clear, a C1 CSI), then `"` up to the 4,096 bytes the
// kubelet reads — to /dev/termination-log and crash-loops. Each `"` doubles when the failure is
// stored as JSON, so a message cut before escaping would not fit binding.last_failure
// (VARCHAR(4096)) and every progress write would fail. Here: the tenant sees the message printable
// and bounded, the ledger holds it within its column, the controller never fails a write of it, and
// the controller keeps acting on such an admission — a PATCH to 2 replicas is applied, the
// never-Ready deadline deletes it and releases its quota, and a DELETE of another one releases it.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import type { ModelService } from '../../schema/model-service.ts';
import { FAILURE_MESSAGE_MAX_CHARS, FAILURE_REASONS } from '../../schema/tenant-errors.ts';
import { REAL_NODE_PLACEMENT } from '../../scripts/testenv/node-config.ts';
import { mockAdmission, onRealNode, podsOf } from '../support/real-node.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';

const DEADLINE_MS = 120_000;
/** OSC 0 (set the window title) ended by BEL, ESC [2J (clear the screen), C1 CSI (U+009B) 31m. */
const CONTROLS = '\u001b]0;owned\u0007\u001b[2J\u009b31m';
const MESSAGE = CONTROLS + '"'.repeat(4096 - Buffer.byteLength(CONTROLS));
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

let system: System;
let controller: ControllerProcess;
beforeAll(async () => {
  system = await startSystem({ quota: ['cpu=4', 'memory=8Gi', 'modelservices=50'] });
  controller = await system.startController('controller-0', { ...REAL_NODE_PLACEMENT, READY_DEADLINE_MS: String(DEADLINE_MS) });
}, 180_000);
afterAll(async () => {
  await system?.stop();
});

type Failure = { reason: string; message: string; exitCode?: number; pod?: string };

/** A crash-looping mock that leaves MESSAGE as its termination message each time it exits. */
async function admitCrashing(name: string): Promise<string> {
  const env = [
    { name: 'MOCK_EXIT_AFTER_S', value: '1' },
    { name: 'MOCK_EXIT_CODE', value: '3' },
    { name: 'MOCK_EXIT_MESSAGE', value: MESSAGE },
  ];
  const [id] = await system.admit(1, mockAdmission({ name, env }));
  return id!;
}

/** Polls until the tenant API shows the crash's failure (exit code 3). */
const untilCrashShown = (id: string) =>
  system.until(`admission ${id}: lastFailure with exit code 3`, `/requests/${id}`, (body) => {
    const f = body.lastFailure as Failure | null;
    return f?.exitCode === 3 ? f : undefined;
  }, { timeoutMs: 90_000 });

const storedFailureChars = async (id: string): Promise<number> =>
  Number((await system.ledger.db.execute('SELECT CHAR_LENGTH(last_failure) AS n FROM binding WHERE reservation_id = ?', [id])).rows[0]?.n);

describe('a termination message of 4 KiB of quotes and terminal controls', () => {
  it('is shown printable and bounded, stored within its column; a PATCH, the never-Ready deadline and a DELETE all still act', async () => {
    const [scaled, deleted] = await Promise.all([admitCrashing('quotes-scaled'), admitCrashing('quotes-deleted')]);
    const [failure, other] = await Promise.all([untilCrashShown(scaled), untilCrashShown(deleted)]);
    expect(onRealNode(await podsOf(system.tenantNamespace, scaled))).toBe(true);

    // Shown: one of the stable reasons, the controls gone, the quotes cut to the bound.
    for (const f of [failure, other]) {
      expect(FAILURE_REASONS as readonly string[]).toContain(f.reason);
      expect(f.message).not.toMatch(CONTROL);
      expect(f.message).toMatch(/^\]0;owned\[2J31m"+$/);
      expect(Array.from(f.message)).toHaveLength(FAILURE_MESSAGE_MAX_CHARS);
    }
    // Stored: the JSON, quotes escaped, within binding.last_failure's 4,096 characters.
    expect(await storedFailureChars(scaled)).toBeGreaterThan(2 * FAILURE_MESSAGE_MAX_CHARS);
    expect(await storedFailureChars(scaled)).toBeLessThanOrEqual(4096);
    // The CR status carries the same printable message.
    const cr = await system.kube.get<ModelService>(paths.modelService(system.tenantNamespace, `md-${scaled.toLowerCase()}`));
    expect(cr.status?.lastFailure?.message).toBe(failure.message);

    // A PATCH to 2 replicas is applied and settled while the pods keep crashing.
    const patch = await system.api(`/requests/${scaled}`, { method: 'PATCH', body: { replicas: 2 }, idempotencyKey: `${scaled}-2` });
    expect(patch.status, JSON.stringify(patch.body)).toBe(202);
    // A DELETE of the other one releases it.
    expect((await system.api(`/requests/${deleted}`, { method: 'DELETE' })).status).toBe(202);
    await system.until('the change to 2 replicas applied and settled', `/requests/${scaled}`, (b) => b.replicas === 2 && b.chargedReplicas === 2 && b.pendingChange === null, {
      timeoutMs: 60_000,
    });
    const patched = await system.kube.get<ModelService>(paths.modelService(system.tenantNamespace, `md-${scaled.toLowerCase()}`));
    expect(patched.spec.replicas).toBe(2);
    const [gone] = await system.untilState([deleted], 'released', 120_000);
    expect(gone).toMatchObject({ lastErrorCode: 'DeletedByTenant' });

    // The never-Ready deadline deletes the crash-looping one and releases its quota, once.
    const [released] = await system.untilState([scaled], 'released', DEADLINE_MS + 150_000);
    expect(released).toMatchObject({ lastErrorCode: 'NeverReady', lastError: expect.stringMatching(/^never Ready within 120000 ms/) });
    expect(await podsOf(system.tenantNamespace, scaled)).toEqual([]);
    for (const id of [scaled, deleted]) {
      expect(await system.ledger.count("SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = 'release'", [id])).toBe(1);
    }

    // No write of the controller failed on the message.
    const log = readFileSync(controller.proc.logFile, 'utf8');
    expect(log).not.toMatch(/Data too long|errno 1406/);
    expect(log).not.toMatch(/startup progress not recorded/);
  }, 480_000);
});
