// The queue in the CLI: `submit --queue [--queue-ttl]`, a queued admission followed by --wait
// (its live position and estimate, then the startup as usual; cancelled or expired end it with
// exit 5), `modeldock queue`, and `delete` of a queued admission.
import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.ts';
import { EXIT } from './exit-codes.ts';
import type { AdmissionView, QueueInfoView } from './model.ts';
import { releaseVerdict, StartupProgress, startupVerdict } from './progress.ts';
import { aboutWait, amountsText, estimateText, plain, queuePlace, renderAdmission, renderQueue, type Look } from './render.ts';
import { specBody } from './spec.ts';
import { admission, runCli } from './test-fixtures.ts';

const env = { MODELDOCK_URL: 'http://api.test', MODELDOCK_KEY: 'k'.repeat(32) };
const flat: Look = { style: plain, fancy: false };

const place = (position: number | null, seconds: number | null, over: Partial<QueueInfoView> = {}): QueueInfoView => ({
  position,
  estimate: seconds === null ? { seconds: null, method: 'release-rate', reason: 'nothing released in the last 600 s' } : { seconds, method: 'release-rate', basis: 'b' },
  queuedAt: '2026-12-01T10:00:00.000Z',
  expiresAt: null,
  bypassed: 0,
  leftAt: null,
  ...over,
});
const queued = (position: number, seconds: number | null, over: Partial<QueueInfoView> = {}): AdmissionView => admission({ state: 'queued', chargedReplicas: 0, queue: place(position, seconds, over) });

describe('submit --queue / --queue-ttl', () => {
  it('parses to "onShortQuota": "queue" and queueTtlSeconds in the body', () => {
    const c = parseCommand(['submit', '--name', 'chat', '--image', 'img:1', '--queue', '--queue-ttl', '600'], env);
    expect(c).toMatchObject({ kind: 'submit', spec: { queue: true, queueTtlSeconds: 600 } });
    if (c.kind !== 'submit') throw new Error('not a submit');
    expect(specBody({}, c.spec)).toMatchObject({ name: 'chat', onShortQuota: 'queue', queueTtlSeconds: 600 });
    const plainSubmit = parseCommand(['submit', '--name', 'chat', '--image', 'img:1'], env);
    if (plainSubmit.kind !== 'submit') throw new Error('not a submit');
    expect(specBody({}, plainSubmit.spec)).not.toHaveProperty('onShortQuota');
    expect(specBody({}, plainSubmit.spec)).not.toHaveProperty('queueTtlSeconds');
  });
  it.each([
    [['--queue-ttl', '60'], /--queue-ttl only applies with --queue/],
    [['--queue', '--queue-ttl', '0'], /--queue-ttl must be a whole number from 1 to 604800/],
    [['--queue', '--queue-ttl', '604801'], /--queue-ttl must be a whole number from 1 to 604800/],
    [['--queue', '--queue-ttl', '10m'], /--queue-ttl must be a whole number/],
  ])('%j is a usage error', (flags, message) => {
    expect(() => parseCommand(['submit', '--name', 'chat', '--image', 'img:1', ...flags], env)).toThrow(message);
  });
  it('queue takes no arguments', () => {
    expect(parseCommand(['queue', '-o', 'json'], env)).toMatchObject({ kind: 'queue', output: 'json' });
    expect(() => parseCommand(['queue', 'x'], env)).toThrow(/queue takes no arguments/);
  });
});

describe('queue texts', () => {
  it.each([
    [0, 'about 0 s'],
    [40, 'about 40 s'],
    [119, 'about 119 s'],
    [120, 'about 2 min'],
    [7199, 'about 120 min'],
    [7200, 'about 2 h'],
  ])('%i s → %s', (s, text) => expect(aboutWait(s)).toBe(text));
  it('a place: the position and the estimate, or why there is none', () => {
    expect(queuePlace(place(2, 40))).toBe('position 2 · about 40 s');
    expect(queuePlace(place(1, 0))).toBe('position 1 · next to be admitted');
    expect(queuePlace(place(3, null))).toBe('position 3 · no estimate: nothing released in the last 600 s');
    expect(queuePlace(place(null, null, { estimate: null }))).toBe('position not reported · no estimate');
    expect(estimateText({ seconds: null })).toBe('no estimate: not reported');
  });
  it('amounts as a tenant writes them, zero ones left out', () => {
    expect(amountsText({ cpu: 1500, memory: 4096, 'nvidia.com/gpu': 0 })).toBe('cpu=1500m memory=4Gi');
    expect(amountsText({ cpu: 2000, memory: 512, 'nvidia.com/gpu': 1 })).toBe('cpu=2 memory=512Mi nvidia.com/gpu=1');
    expect(amountsText({ cpu: 0 })).toBe('-');
  });
  it('renderQueue: a table in admission order, and says when only the first ones are listed', () => {
    const text = renderQueue(
      {
        tenant: 'acme',
        queued: 3,
        items: [
          { id: '01A', position: 1, amounts: { cpu: 1000, memory: 1024, 'nvidia.com/gpu': 0 }, estimate: { seconds: 40, method: 'release-rate' } },
          { id: '01B', position: 2, amounts: { cpu: 500, memory: 512, 'nvidia.com/gpu': 0 }, estimate: { seconds: null, method: 'release-rate', reason: 'no rate' } },
        ],
      },
      flat,
    );
    expect(text.split('\n')).toEqual([
      'tenant acme: 3 queued (the first 2 shown)',
      'POSITION  ID   AMOUNTS                ESTIMATE',
      '1         01A  cpu=1 memory=1Gi       about 40 s',
      '2         01B  cpu=500m memory=512Mi  no estimate: no rate',
    ]);
    expect(renderQueue({ tenant: 'acme', queued: 0, items: [] }, flat)).toBe('tenant acme: no queued admissions');
  });
  it('get of a queued admission: its place and expiry, no startup timeline yet', () => {
    const text = renderAdmission(queued(2, 40, { expiresAt: '2026-12-01T11:00:00.000Z', bypassed: 1 }), flat);
    expect(text).toContain('  queue:     position 2 · about 40 s (passed by 1 smaller one(s))');
    expect(text).toContain('  expires:   2026-12-01T11:00:00.000Z');
    expect(text).not.toContain('timeline');
    const left = renderAdmission(admission({ state: 'cancelled', queue: place(null, null, { estimate: null, leftAt: '2026-12-01T10:01:00.000Z' }) }), flat);
    expect(left).toContain('  queued:    2026-12-01T10:00:00.000Z → 2026-12-01T10:01:00.000Z (cancelled, never charged)');
  });
});

describe('the wait through the queue', () => {
  it('verdicts: queued waits, cancelled and expired fail with why, a delete of a queued one is done', () => {
    expect(startupVerdict(queued(1, 10))).toEqual({ kind: 'waiting' });
    expect(startupVerdict(admission({ state: 'cancelled' }))).toEqual({ kind: 'failed', reason: expect.stringMatching(/cancelled while queued.*nothing was charged/) });
    expect(startupVerdict(admission({ state: 'expired', queue: place(null, null, { expiresAt: '2026-12-01T10:10:00.000Z' }) }))).toEqual({
      kind: 'failed',
      reason: expect.stringMatching(/expired in the queue at 2026-12-01T10:10:00.000Z .*nothing was charged/),
    });
    expect(releaseVerdict(admission({ state: 'cancelled' }))).toEqual({ kind: 'done' });
  });
  it('progress: a line each time the position moves, then the stages once admitted', () => {
    const p = new StartupProgress(flat);
    expect(p.update(queued(3, 90, { expiresAt: '2026-12-01T11:00:00.000Z' }))).toEqual(['queued     position 3 · about 90 s, expires 2026-12-01T11:00:00.000Z']);
    expect(p.waitingFor(queued(3, 80))).toBe('admission (position 3 · about 80 s)');
    expect(p.update(queued(3, 80))).toEqual([]);
    expect(p.update(queued(1, 20))).toEqual(['queued     position 1 · about 20 s']);
    expect(p.finish(queued(1, 20))).toEqual([]);
    const admitted = admission({ state: 'admitted', queue: place(null, null, { estimate: null, leftAt: '2026-12-01T10:02:00.000Z' }) });
    expect(p.update(admitted)).toEqual(['ok left the queue 2026-12-01T10:02:00.000Z', 'ok admitted   2026-12-01T10:00:00.000Z']);
    expect(p.update(admitted)).toEqual([]);
  });
});

/** Runs the CLI against a fake API (test-fixtures.ts runCli). */
const cli = (argv: string[], answers: Parameters<typeof runCli>[1]) => runCli(argv, answers, env);

const id = admission().id;
const path = `/requests/${id}`;
const ready = admission({ state: 'ready', endpoint: 'http://api.test/v1/models/x', binding: { namespace: 'ns', crName: 'c', everReady: true, firstReadyAt: '2026-12-01T10:03:00.000Z' } });

describe('modeldock submit --queue --wait', () => {
  it('shows the live place until admitted, then the startup, and exits 0 when ready', async () => {
    const r = await cli(['submit', '--name', 'chat', '--image', 'img:1', '--queue', '--queue-ttl', '3600', '--wait', '--interval', '10ms'], {
      'POST /requests': [{ status: 202, body: queued(2, 40, { expiresAt: '2026-12-01T11:00:00.000Z' }) }],
      [`GET ${path}`]: [
        { status: 200, body: queued(2, 35) },
        { status: 200, body: queued(1, 12) },
        { status: 200, body: admission({ state: 'delivered' }) },
        { status: 200, body: ready },
      ],
    });
    expect(r.code).toBe(EXIT.ok);
    expect(r.calls[0]).toMatchObject({ method: 'POST', path: '/requests', body: { name: 'chat', onShortQuota: 'queue', queueTtlSeconds: 3600 } });
    const lines = r.out.trimEnd().split('\n');
    expect(lines.slice(0, 5)).toEqual([
      `queued chat ${id}`,
      '  waiting for quota, nothing charged yet: position 2 · about 40 s; expires 2026-12-01T11:00:00.000Z',
      'queued     position 2 · about 40 s, expires 2026-12-01T11:00:00.000Z',
      'queued     position 1 · about 12 s',
      'ok left the queue',
    ]);
    expect(r.out).toContain('ok admitted');
    expect(lines.at(-1)).toBe('ready: http://api.test/v1/models/x');
    // Every poll re-reads the admission: the position is the server's, never a guess.
    expect(r.calls.filter((c) => c.method === 'GET' && c.path === path)).toHaveLength(4);
  });

  it.each([
    ['cancelled', /cancelled while queued/],
    ['expired', /expired in the queue/],
  ])('%s while queued: a clear message and exit 5', async (state, message) => {
    const r = await cli(['submit', '--name', 'chat', '--image', 'img:1', '--queue', '--wait'], {
      'POST /requests': [{ status: 202, body: queued(1, null) }],
      [`GET ${path}`]: [{ status: 200, body: queued(1, null) }, { status: 200, body: admission({ state, queue: place(null, null, { estimate: null }) }) }],
    });
    expect(r.code).toBe(EXIT.failedStart);
    expect(r.out).toMatch(new RegExp(`FAILED chat \\(${id}\\): .*${message.source}`));
    expect(r.out).not.toContain('ok admitted');
  });

  it('without --wait: the place, and how to follow or cancel; exit 0', async () => {
    const r = await cli(['submit', '--name', 'chat', '--image', 'img:1', '--queue'], { 'POST /requests': [{ status: 202, body: queued(4, null) }] });
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toBe(
      `queued chat ${id}\n  waiting for quota, nothing charged yet: position 4 · no estimate: nothing released in the last 600 s; no expiry (--wait to follow; modeldock delete ${id} cancels)\n`,
    );
  });

  it('a replay of a queued one says so; a 409 (beyond the hard limits, or a refusing submit behind a queue) is exit 3', async () => {
    const replay = await cli(['submit', '--name', 'chat', '--image', 'img:1', '--queue'], { 'POST /requests': [{ status: 200, body: queued(1, 5) }] });
    expect(replay.out.split('\n')[0]).toBe(`already submitted (same Idempotency-Key), queued chat ${id}`);
    const refused = await cli(['submit', '--name', 'chat', '--image', 'img:1'], {
      'POST /requests': [{ status: 409, body: { error: { code: 'quota_exceeded', message: 'the tenant has 2 queued admissions: nothing passes the queue', details: { queued: 2 } } } }],
    });
    expect(refused.code).toBe(EXIT.quotaExceeded);
    expect(refused.err).toContain('nothing passes the queue');
  });
});

describe('modeldock queue and delete of a queued admission', () => {
  const view = { tenant: 'acme', queued: 1, items: [{ id, position: 1, amounts: { cpu: 1000, memory: 2048, 'nvidia.com/gpu': 0 }, estimate: { seconds: 30, method: 'release-rate', basis: 'b' } }] };
  it('queue: the table, or the API document with -o json', async () => {
    const table = await cli(['queue'], { 'GET /queue': [{ status: 200, body: view }] });
    expect(table.code).toBe(EXIT.ok);
    expect(table.out).toContain(`1         ${id}  cpu=1 memory=2Gi  about 30 s`);
    const json = await cli(['queue', '-o', 'json'], { 'GET /queue': [{ status: 200, body: view }] });
    expect(JSON.parse(json.out)).toEqual(view);
  });
  it('delete of a queued one: cancelled, nothing charged; --wait is done at once', async () => {
    const cancelled = admission({ state: 'cancelled', queue: place(null, null, { estimate: null }) });
    const r = await cli(['delete', id], { [`DELETE ${path}`]: [{ status: 202, body: cancelled }] });
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toBe(`chat ${id}: cancelled (it was queued: nothing was charged)\n`);
    const w = await cli(['delete', id, '--wait'], { [`DELETE ${path}`]: [{ status: 202, body: cancelled }] });
    expect(w.code).toBe(EXIT.ok);
    expect(w.out.trimEnd().split('\n').at(-1)).toBe('cancelled: chat left the queue unadmitted; nothing was charged');
  });
});
