// `modeldock … --wait` end to end: the CLI as a child process against the whole system (the
// Worker in workerd, the controller, the real control plane with KWOK). Not a TTY: one plain
// line per stage; a TTY (a pseudo-terminal from util-linux `script`): a spinner line redrawn in
// place, in colour unless NO_COLOR. Failure to start → exit 5 with the failure; deadline → 6;
// delete --wait follows the release, ReleaseBlocked and its pods included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import { LABELS } from '../../schema/model-service.ts';
import { runCli, startCli, type CliResult } from '../support/cli.ts';
import { startSystem, TENANT_KEY, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

let sys: System;
beforeAll(async () => {
  sys = await startSystem();
  await sys.startController('ctl-cli', { READY_DEADLINE_MS: '6000', RELEASE_BLOCKED_AFTER_MS: '1000' });
});
afterAll(async () => sys?.stop());

const env = (extra: Record<string, string> = {}) => ({ MODELDOCK_URL: sys.worker.url, MODELDOCK_KEY: TENANT_KEY, ...extra });
let n = 0;
const submitArgs = (image = 'ghcr.io/acme/mock-model:0.1.0', ...extra: string[]) => [
  'submit', '--name', `cli-${++n}`, '--image', image, '--replicas', '2', '--cpu', '100m', '--memory', '128Mi',
  '--wait', '--interval', '250ms', ...extra,
];
const ok = (r: CliResult, code = 0) => {
  expect(r.code, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(code);
  expect(r.stdout + r.stderr).not.toContain(TENANT_KEY);
  return r;
};
/** Whether the text holds an SGR (colour) escape sequence. */
const hasColour = (s: string) => s.split('\u001b[').slice(1).some((part) => /^[0-9;]*m/.test(part));
const CLEAR_LINE = '\r\u001b[2K';
const idIn = (text: string) => /admitted \S+ ([0-9A-Z]{26})/.exec(text)?.[1] ?? '';

describe('modeldock submit --wait', () => {
  it('not a TTY: one plain line per stage, in order, and the endpoint; exit 0 when ready', async () => {
    const r = ok(await runCli(submitArgs(), { env: env(), timeoutMs: 120_000 }));
    expect(r.stdout).not.toContain('\u001b');
    const lines = r.stdout.trimEnd().split('\n');
    const id = idIn(lines[0]!);
    expect(lines[0]).toMatch(/^admitted cli-\d+ [0-9A-Z]{26}$/);
    // Each stage once, in order, each with its time after admission (the API reports the timeline).
    const stage = (name: string) => lines.findIndex((l) => new RegExp(`^(ok|-) ${name} `).test(l));
    const order = ['admitted', 'delivered', 'scheduled', 'started', 'ready'].map(stage);
    expect(order.every((i, k) => i > 0 && (k === 0 || i > order[k - 1]!)), lines.join('\n')).toBe(true);
    expect(lines[order[0]!]).toMatch(/^ok admitted +\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    for (const s of ['delivered', 'scheduled', 'started']) expect(lines[stage(s)]).toMatch(new RegExp(`^ok ${s} +\\+[\\d.]+m?s$`));
    expect(lines[order[4]!]).toMatch(/^ok ready +\+[\d.]+(ms|s|m\d\ds)$/);
    expect(lines.at(-1)).toBe(`ready: ${sys.worker.url}/v1/models/${id}`);
    expect((await sys.api(`/requests/${id}`)).body.state).toBe('ready');
  });

  it('a TTY: the spinner line is redrawn in place, stages ticked in colour; NO_COLOR turns colours off', async () => {
    const r = ok(await runCli(submitArgs(), { env: env(), tty: true, timeoutMs: 120_000 }));
    expect(r.stdout).toContain(CLEAR_LINE);
    expect(r.stdout).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏].*waiting for (delivered|scheduled|started|ready) …/);
    expect(hasColour(r.stdout)).toBe(true);
    expect(r.stdout).toMatch(/✔.* ready +.*\+[\d.]+/);
    expect(r.stdout).toMatch(/ready.*: http:\/\/127\.0\.0\.1:\d+\/v1\/models\/[0-9A-Z]{26}/);

    const plain = ok(await runCli(submitArgs(), { env: env({ NO_COLOR: '1' }), tty: true, timeoutMs: 120_000 }));
    expect(plain.stdout).toContain(CLEAR_LINE);
    expect(hasColour(plain.stdout)).toBe(false);
    expect(plain.stdout).toMatch(/✔ ready +\+[\d.]+/);
  });

  it('a pod that never starts: exit 5 with what failed', async () => {
    const r = ok(await runCli(submitArgs('example.invalid/modeldock/crash-loop:1', '--timeout', '90s'), { env: env(), timeoutMs: 120_000 }), 5);
    expect(r.stdout).toMatch(/^FAILED cli-\d+ \([0-9A-Z]{26}\): (the admission is (deleting|releasing|released) and was never ready|a pod failed to start \(CrashLoopBackOff\))$/m);
    expect(r.stdout).toMatch(/^ {2}last (error: {3}never Ready within 6000 ms|failure: .*CrashLoopBackOff.*)$/m);
    expect(r.stdout).toMatch(/^- ready +pending$/m);
  });

  it('the deadline passes first: exit 6', async () => {
    const r = ok(await runCli(submitArgs('example.invalid/modeldock/never-ready:1', '--timeout', '1s'), { env: env(), timeoutMs: 60_000 }), 6);
    expect(r.stdout).toMatch(/^FAILED cli-\d+ \([0-9A-Z]{26}\): still (admitted|delivered), not ready, after 1s \(--timeout\)$/m);
  });
});

describe('modeldock scale --wait', () => {
  it('up: charged at once, applying → settled; down: settled once the surplus pods are gone; exit 0', async () => {
    const [id] = await sys.admit(1, { name: 'scaled', replicas: 1 });
    await sys.untilState([id!], 'ready');
    const up = ok(await runCli(['scale', id!, '3', '--wait', '--interval', '250ms'], { env: env(), timeoutMs: 120_000 }));
    const lines = up.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`scaled ${id}: 1 → 3 replicas, charged for 3`);
    expect(lines.some((l) => /^applying +1 → 3/.test(l)), up.stdout).toBe(true);
    expect(lines.some((l) => /^settled +3 replica\(s\), charged 3$/.test(l)), up.stdout).toBe(true);
    expect(lines.at(-1)).toBe('scaled: scaled runs 3 replica(s), charged 3');
    expect((await sys.api(`/requests/${id}`)).body).toMatchObject({ replicas: 3, chargedReplicas: 3, pendingChange: null });

    const down = ok(await runCli(['scale', id!, '1', '--wait', '--interval', '250ms', '-o', 'json'], { env: env(), timeoutMs: 120_000 }));
    expect(down.stderr).toContain(`scaled ${id}: 3 → 1 replicas, charged for 3`);
    expect(down.stderr).toMatch(/settled +1 replica\(s\), charged 1/);
    expect(JSON.parse(down.stdout)).toMatchObject({ id, replicas: 1, chargedReplicas: 1, pendingChange: null });
    const pods = await sys.kube.list<{ metadata: { name: string } }>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` });
    expect(pods.items).toHaveLength(1);

    // The same replicas again: nothing to change; more than MAX_REPLICAS: the API's message, exit 2.
    expect(ok(await runCli(['scale', id!, '1'], { env: env() })).stdout).toBe(`scaled ${id}: 1 replicas (nothing to change)\n`);
    const refused = ok(await runCli(['scale', id!, '999'], { env: env() }), 2);
    expect(refused.stderr).toMatch(/^error: invalid request: replicas: /);
  });
});

describe('modeldock delete --wait', () => {
  it('follows deleting → released, shows ReleaseBlocked with the pod it waits for; exit 0', async () => {
    const [id] = await sys.admit(1, { name: 'held' });
    await sys.untilState([id!], 'ready');
    const pods = await sys.kube.list<{ metadata: { name: string } }>(paths.pods(sys.tenantNamespace), { labelSelector: `${LABELS.admissionId}=${id}` });
    const pod = pods.items[0]!.metadata.name;
    const podPath = `${paths.pods(sys.tenantNamespace)}/${pod}`;
    await sys.kube.mergePatch(podPath, { metadata: { finalizers: ['modeldock.test/hold'] } });

    const run = startCli(['delete', id!, '--wait', '--interval', '250ms', '--timeout', '90s'], { env: env() });
    // Let the pod go only once the CLI has shown what blocks the release.
    await waitFor('the CLI to show ReleaseBlocked', async () => run.output().stdout.includes('ReleaseBlocked since'), { timeoutMs: 60_000 });
    await sys.kube.mergePatch(podPath, { metadata: { finalizers: null } });
    const r = ok(await run.result);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^deleting +\d{4}-\d\d-\d\dT/);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^ReleaseBlocked since \\S+: quota kept until these pods are gone: ${pod}$`)));
    expect(lines).toContainEqual(expect.stringMatching(/^released +\+[\d.]+(ms|s)$/));
    expect(lines.at(-1)).toBe('released: the quota of held is free again');
    expect((await sys.api(`/requests/${id}`)).body.state).toBe('released');
  });
});
