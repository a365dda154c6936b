// Autoscaling in the CLI: `submit --autoscale MIN:MAX:TARGET`, `scale <id> --autoscale …|off`,
// a 409 autoscaled, what `get` and `list` show of an autoscaled admission (range and target,
// desired / set / charged replicas, the last change, the conditions), and the lines a --wait
// prints as the autoscaler works.
import { describe, expect, it } from 'vitest';
import { parseAutoscale, parseCommand } from './args.ts';
import { AutoscaleProgress } from './autoscale.ts';
import { EXIT } from './exit-codes.ts';
import type { AdmissionView, AutoscaleStatusView } from './model.ts';
import { changeVerdict } from './progress.ts';
import { plain, renderAdmission, renderList, type Look } from './render.ts';
import { specBody } from './spec.ts';
import { admission, autoscaled, runCli } from './test-fixtures.ts';

const env = { MODELDOCK_URL: 'http://api.test', MODELDOCK_KEY: 'k'.repeat(32) };
const flat: Look = { style: plain, fancy: false };
const tagged: Look = { style: (c, t) => `<${c}>${t}</${c}>`, fancy: true };

const decision = { at: '2026-12-01T10:04:00.000Z', fromReplicas: 2, toReplicas: 3, desiredReplicas: 4, reason: 'scale-up: load 35.2 asks for 4 replicas: scaling up from 2' };
const quotaLimited = {
  type: 'QuotaLimited',
  reason: 'QuotaShort',
  message: 'the load asks for 4 replicas; the quota is short: cpu 500 requested, 0 available',
  since: '2026-12-01T10:04:00.000Z',
};
const metricsUnavailable = { type: 'MetricsUnavailable', reason: 'Holding', message: 'no ready pod to read the load from', since: '2026-12-01T10:04:10.000Z' };
const panic = { type: 'Panic', reason: 'LoadBurst', message: 'panic window load 80 asks for 8 replicas', since: '2026-12-01T10:04:20.000Z' };
const status = (over: Partial<NonNullable<AutoscaleStatusView>> = {}): NonNullable<AutoscaleStatusView> => ({
  desiredReplicas: 4,
  load: 35.25,
  panic: false,
  lastDecision: decision,
  conditions: [quotaLimited],
  observedAt: '2026-12-01T10:04:30.000Z',
  ...over,
});

const submit = (...flags: string[]) => {
  const c = parseCommand(['submit', '--name', 'chat', '--image', 'img:1', ...flags], env);
  if (c.kind !== 'submit') throw new Error('not a submit');
  return c;
};

describe('--autoscale MIN:MAX:TARGET', () => {
  it('parses the range and the target; off only where it may be turned off', () => {
    expect(parseAutoscale('1:8:10', false)).toEqual({ minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 });
    expect(parseAutoscale('2:2:0.5', false)).toEqual({ minReplicas: 2, maxReplicas: 2, targetQueuePerReplica: 0.5 });
    expect(parseAutoscale('off', true)).toBeNull();
  });
  it.each([
    ['off', false, /--autoscale off only applies to scale/],
    ['1:8', true, /must be MIN:MAX:TARGET, e.g. 1:8:10 .*, or off \(got "1:8"\)/],
    ['1-8-10', false, /must be MIN:MAX:TARGET/],
    ['0:8:10', false, /MIN and MAX must be from 1 to 1000/],
    ['1:1001:10', false, /MIN and MAX must be from 1 to 1000/],
    ['5:2:10', false, /MIN must not be more than MAX/],
    ['1:8:0', false, /TARGET must be more than 0 and at most 10000/],
    ['1:8:10001', false, /TARGET must be more than 0/],
  ])('%j is refused', (v, offAllowed, message) => expect(() => parseAutoscale(v, offAllowed)).toThrow(message));

  it('submit: the body carries autoscale, and starts at MIN unless --replicas says otherwise', () => {
    expect(specBody({}, submit('--autoscale', '2:8:10').spec)).toMatchObject({ replicas: 2, autoscale: { minReplicas: 2, maxReplicas: 8, targetQueuePerReplica: 10 } });
    expect(specBody({}, submit('--autoscale', '2:8:10', '--replicas', '5').spec)).toMatchObject({ replicas: 5 });
    expect(specBody({}, submit().spec)).not.toHaveProperty('autoscale');
    expect(specBody({}, submit().spec)).toMatchObject({ replicas: 1 });
    expect(() => submit('--autoscale', 'off')).toThrow(/only applies to scale/);
  });
  it("submit: the flag overrides the file's range and target and keeps its other knobs; a file's autoscale alone starts at its MIN", () => {
    const file = { autoscale: { minReplicas: 3, maxReplicas: 4, targetQueuePerReplica: 1, stableWindowSeconds: 30 } };
    expect(specBody(file, submit('--autoscale', '1:8:10').spec).autoscale).toEqual({ minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10, stableWindowSeconds: 30 });
    expect(specBody(file, submit().spec)).toMatchObject({ replicas: 3, autoscale: file.autoscale });
  });

  it('scale: --autoscale with or without replicas, off; replicas alone as before', () => {
    expect(parseCommand(['scale', '01ABC', '--autoscale', '1:8:10', '--wait'], env)).toMatchObject({
      kind: 'scale',
      id: '01ABC',
      replicas: undefined,
      autoscale: { minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 },
      wait: { wait: true },
    });
    expect(parseCommand(['scale', '01ABC', '--autoscale', 'off'], env)).toMatchObject({ kind: 'scale', replicas: undefined, autoscale: null });
    expect(parseCommand(['scale', '01ABC', '4', '--autoscale', 'off'], env)).toMatchObject({ replicas: 4, autoscale: null });
    expect(parseCommand(['scale', '01ABC', '4', '--autoscale', '2:6:5'], env)).toMatchObject({ replicas: 4, autoscale: { minReplicas: 2 } });
    expect(parseCommand(['scale', '01ABC', '3'], env)).toMatchObject({ replicas: 3, autoscale: undefined });
  });
  it.each([
    [['scale', '01ABC'], /an id and a number of replicas .*or an id and --autoscale MIN:MAX:TARGET\|off/],
    [['scale', '01ABC', '9', '--autoscale', '2:6:5'], /replicas 9 is outside --autoscale 2..6/],
    [['scale', '01ABC', '--autoscale', 'on'], /--autoscale must be MIN:MAX:TARGET/],
    [['scale', '01ABC', '1', '2', '--autoscale', 'off'], /an id and a number of replicas/],
  ])('%j is a usage error', (argv, message) => expect(() => parseCommand(argv, env)).toThrow(message));
});

describe('get of an autoscaled admission', () => {
  const lines = (a: AdmissionView, look = flat) => renderAdmission(a, look).split('\n');

  it('the range and target, desired / set / charged, the last change and the conditions, below the replicas', () => {
    const out = lines(autoscaled(status()));
    const at = out.indexOf('  replicas:  3   resources per replica: cpu=500m memory=1Gi');
    expect(at).toBeGreaterThan(0);
    expect(out.slice(at + 1, at + 6)).toEqual([
      '  autoscale: 1..8 replicas, target 10 per replica',
      '    desired 4 (load 35.25) · replicas 3 · charged 3',
      '    last change: 2 → 3 (asked for 4) at 2026-12-01T10:04:00.000Z: scale-up: load 35.2 asks for 4 replicas: scaling up from 2',
      '    QuotaLimited since 2026-12-01T10:04:00.000Z: the load asks for 4 replicas; the quota is short: cpu 500 requested, 0 available',
      '  endpoint:  -',
    ]);
  });
  it('the ready pods the autoscaler last counted, when it reported them', () => {
    expect(lines(autoscaled(status({ readyReplicas: 2 })))).toContain('    desired 4 (load 35.25) · replicas 3 · charged 3 · ready 2');
  });
  it('every condition with its message; panic on the range line; a change in flight and what is charged meanwhile', () => {
    const a = autoscaled(status({ panic: true, conditions: [metricsUnavailable, panic], lastDecision: { ...decision, desiredReplicas: 3 } }), {
      replicas: 2,
      chargedReplicas: 3,
      pendingChange: { generation: 5, fromReplicas: 3, toReplicas: 2, phase: 'awaitingScaleDown' },
    });
    const out = lines(a);
    expect(out).toContain('  autoscale: 1..8 replicas, target 10 per replica (panic)');
    expect(out).toContain('    desired 4 (load 35.25) · replicas 3 → 2 (awaitingScaleDown) · charged 3');
    expect(out).toContain('    last change: 2 → 3 at 2026-12-01T10:04:00.000Z: scale-up: load 35.2 asks for 4 replicas: scaling up from 2');
    expect(out).toContain('    MetricsUnavailable since 2026-12-01T10:04:10.000Z: no ready pod to read the load from');
    expect(out).toContain('    Panic since 2026-12-01T10:04:20.000Z: panic window load 80 asks for 8 replicas');
    expect(out.filter((l) => l.includes('QuotaLimited'))).toEqual([]);
    const coloured = renderAdmission(a, tagged);
    expect(coloured).toContain('<yellow>MetricsUnavailable</yellow> since');
    expect(coloured).toContain('<red>Panic</red> since');
  });
  it('before its first decision, and without a reading or a change yet', () => {
    expect(lines(autoscaled(null)).slice(4, 7)).toEqual([
      '  autoscale: 1..8 replicas, target 10 per replica',
      '    desired not known yet (no load reading) · replicas 3 · charged 3',
      '    no decision yet: the autoscaler has not read the load',
    ]);
    const out = lines(autoscaled(status({ desiredReplicas: null, load: null, lastDecision: null, conditions: [metricsUnavailable] })));
    expect(out).toContain('    desired not known yet (no load reading) · replicas 3 · charged 3');
    expect(out).toContain('    last change: none yet');
  });
  it('nothing about autoscaling for an admission that does not autoscale', () => {
    expect(renderAdmission(admission({ autoscaleStatus: null }), flat)).not.toContain('autoscale');
  });
  it('list: the range beside the replicas', () => {
    const now = new Date('2026-12-01T10:00:00.000Z');
    expect(renderList([autoscaled(null)], now, flat).split('\n')[1]).toContain('  ready  3 (auto 1..8)  ');
    expect(renderList([admission()], now, flat).split('\n')[1]).toContain('  admitted  2         ');
  });
});

describe('the autoscaler during a --wait', () => {
  it('a line per new change, per condition that begins and per one that clears; nothing twice', () => {
    const p = new AutoscaleProgress(flat);
    expect(p.update(autoscaled(null))).toEqual([]);
    expect(p.update(autoscaled(status()))).toEqual([
      'autoscaled         2 → 3 (asked for 4) at 2026-12-01T10:04:00.000Z: scale-up: load 35.2 asks for 4 replicas: scaling up from 2',
      'QuotaLimited       the load asks for 4 replicas; the quota is short: cpu 500 requested, 0 available (since 2026-12-01T10:04:00.000Z)',
    ]);
    // A new message of the same condition (the shortfall changed) is no new line: it began once.
    expect(p.update(autoscaled(status({ conditions: [{ ...quotaLimited, message: 'other numbers' }] })))).toEqual([]);
    const next = { ...decision, at: '2026-12-01T10:06:00.000Z', fromReplicas: 3, toReplicas: 4, desiredReplicas: 4, reason: 'scale-up: more' };
    expect(p.update(autoscaled(status({ lastDecision: next, conditions: [panic] })))).toEqual([
      'autoscaled         3 → 4 at 2026-12-01T10:06:00.000Z: scale-up: more',
      'Panic              panic window load 80 asks for 8 replicas (since 2026-12-01T10:04:20.000Z)',
      'QuotaLimited       cleared',
    ]);
    expect(p.update(autoscaled(status({ lastDecision: next, conditions: [panic] })))).toEqual([]);
  });
  it('nothing for an admission that does not autoscale', () => {
    expect(new AutoscaleProgress(flat).update(admission({ autoscaleStatus: status() }))).toEqual([]);
  });
  it('a change of the autoscaling settles with its generation, whatever the replicas', () => {
    const pending = (generation: number) => ({ generation, fromReplicas: 3, toReplicas: 2, phase: 'applying' });
    const v = changeVerdict(5);
    expect(v(autoscaled(null, { pendingChange: pending(5) }))).toEqual({ kind: 'waiting', note: undefined });
    expect(v(autoscaled(null, { pendingChange: { ...pending(5), phase: 'awaitingScaleDown' } }))).toEqual({ kind: 'waiting', note: 'quota kept for 3 replicas until the surplus pods are gone' });
    expect(v(autoscaled(null, { pendingChange: pending(6) }))).toEqual({ kind: 'done' });
    expect(v(autoscaled(null, { replicas: 7 }))).toEqual({ kind: 'done' });
    expect(v(autoscaled(null, { state: 'releasing' }))).toEqual({ kind: 'failed', reason: 'the admission is releasing: the change no longer applies' });
    expect(changeVerdict(undefined)(autoscaled(null, { pendingChange: pending(9) }))).toMatchObject({ kind: 'waiting' });
  });
});

describe('modeldock submit / scale with --autoscale against the API', () => {
  const id = admission().id;
  const path = `/requests/${id}`;

  it('submit --autoscale sends the spec and says how it autoscales', async () => {
    const r = await runCli(['submit', '--name', 'chat', '--image', 'img:1', '--autoscale', '1:8:10'], {
      'POST /requests': [{ status: 201, body: autoscaled(null, { state: 'admitted', spec: { ...autoscaled(null).spec, replicas: 1 }, replicas: 1 }) }],
    });
    expect(r.code).toBe(EXIT.ok);
    expect(r.calls[0]).toMatchObject({ method: 'POST', path: '/requests', body: { name: 'chat', replicas: 1, autoscale: { minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 } } });
    expect(r.out).toBe(`admitted chat ${id}\n  autoscales 1..8 replicas, target 10 per replica, starting at 1\n`);
  });

  it('scale --autoscale sends PATCH {autoscale}; off sends null; replicas go along when given', async () => {
    const on = await runCli(['scale', id, '--autoscale', '2:6:5'], {
      [`PATCH ${path}`]: [{ status: 202, body: autoscaled(null, { spec: { ...autoscaled(null).spec, autoscale: { minReplicas: 2, maxReplicas: 6, targetQueuePerReplica: 5 } } }) }],
    });
    expect(on.code).toBe(EXIT.ok);
    expect(on.calls).toEqual([{ method: 'PATCH', path, body: { autoscale: { minReplicas: 2, maxReplicas: 6, targetQueuePerReplica: 5 } } }]);
    expect(on.out).toBe(`chat ${id}: 3 replicas; autoscales 2..6 replicas, target 5 per replica\n`);
    const off = await runCli(['scale', id, '4', '--autoscale', 'off'], {
      [`PATCH ${path}`]: [{ status: 202, body: admission({ replicas: 3, chargedReplicas: 4, pendingChange: { generation: 5, fromReplicas: 3, toReplicas: 4, phase: 'applying' } }) }],
    });
    expect(off.calls).toEqual([{ method: 'PATCH', path, body: { replicas: 4, autoscale: null } }]);
    expect(off.out).toBe(`chat ${id}: 3 → 4 replicas, charged for 4; autoscaling off: the replicas stay as set\n`);
    const manual = await runCli(['scale', id, '4'], { [`PATCH ${path}`]: [{ status: 200, body: admission({ replicas: 4 }) }] });
    expect(manual.calls[0]?.body).toEqual({ replicas: 4 });
    expect(manual.out).toBe(`chat ${id}: 4 replicas (nothing to change)\n`);
  });

  it('replicas alone for an autoscaled admission: the API message, how to change it instead, exit 9', async () => {
    const message = 'this admission autoscales between 1 and 8 replicas: change autoscale (its range), or set autoscale to null to set replicas yourself';
    const r = await runCli(['scale', id, '4'], { [`PATCH ${path}`]: [{ status: 409, body: { error: { code: 'autoscaled', message } } }] });
    expect(r.code).toBe(EXIT.conflict);
    expect(r.out).toBe('');
    expect(r.err).toBe(`error: ${message} (modeldock scale ${id} --autoscale MIN:MAX:TARGET, or --autoscale off)\n`);
  });

  it('scale --autoscale --wait: settled once its change is, though the autoscaler moved the replicas since; its work is shown', async () => {
    const range = { ...autoscaled(null).spec, autoscale: { minReplicas: 4, maxReplicas: 8, targetQueuePerReplica: 10 } };
    const pending = { generation: 5, fromReplicas: 3, toReplicas: 4, phase: 'applying', requestedAt: '2026-12-01T10:04:59.000Z' };
    const after = { ...decision, at: '2026-12-01T10:05:30.000Z', fromReplicas: 4, toReplicas: 6, desiredReplicas: 6, reason: 'scale-up: busy' };
    const r = await runCli(['scale', id, '--autoscale', '4:8:10', '--wait'], {
      [`PATCH ${path}`]: [{ status: 202, body: autoscaled(null, { spec: range, generation: 5, replicas: 4, chargedReplicas: 4, pendingChange: pending }) }],
      [`GET ${path}`]: [
        { status: 200, body: autoscaled(status({ lastDecision: null, conditions: [metricsUnavailable] }), { spec: range, generation: 5, replicas: 4, chargedReplicas: 4, pendingChange: pending }) },
        { status: 200, body: autoscaled(status({ lastDecision: after, conditions: [] }), { spec: range, generation: 6, replicas: 6, chargedReplicas: 6, pendingChange: null }) },
      ],
    });
    expect(r.code).toBe(EXIT.ok);
    expect(r.calls.map((c) => c.method)).toEqual(['PATCH', 'GET', 'GET']);
    expect(r.out.trimEnd().split('\n')).toEqual([
      `chat ${id}: 3 → 4 replicas, charged for 4; autoscales 4..8 replicas, target 10 per replica`,
      'applying           3 → 4 +1.0s',
      'MetricsUnavailable no ready pod to read the load from (since 2026-12-01T10:04:10.000Z)',
      'settled            6 replica(s), charged 6',
      'autoscaled         4 → 6 at 2026-12-01T10:05:30.000Z: scale-up: busy',
      'MetricsUnavailable cleared',
      'scaled: chat runs 6 replica(s), charged 6',
    ]);
  });
});
