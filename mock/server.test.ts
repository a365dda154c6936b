import { afterEach, describe, expect, test } from 'vitest';
import { readOpenAiStream } from '../test/support/sse-client.ts';
import { createGate, slotState, startMock, waitFor, type TestMock } from '../test/support/mock-server.ts';

const CHAT = '/v1/chat/completions';
const chat = (extra: Record<string, unknown> = {}) => ({
  model: 'mock-model',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

let t: TestMock;
afterEach(() => t.mock.close(0));

describe('probes and discovery', { timeout: 20_000 }, () => {
  test('readiness flips after the warm-up; liveness is always ok', async () => {
    let clock = 1_700_000_000_000;
    t = await startMock({ warmupMs: 30_000, now: () => clock });
    const probe = async (path: string) => {
      const res = await fetch(`${t.url}${path}`);
      return { status: res.status, body: await res.json() };
    };
    expect(await probe('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe('/readyz')).toEqual({ status: 503, body: { status: 'warming_up' } });
    const early = await t.post(CHAT, chat());
    expect(early.status).toBe(503);
    expect(await early.json()).toMatchObject({ error: { code: 'model_loading' } });

    clock += 29_999;
    expect((await probe('/readyz')).status).toBe(503);
    clock += 1;
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
    expect((await t.post(CHAT, chat({ max_tokens: 1 }))).status).toBe(200);
  });

  test('never ready: /readyz 503 long past the warm-up, /healthz 200, completions 503 model_loading', async () => {
    let clock = 1_700_000_000_000;
    t = await startMock({ warmupMs: 1_000, neverReady: true, now: () => clock });
    clock += 86_400_000;
    const ready = await fetch(`${t.url}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 503, body: { status: 'never_ready' } });
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const res = await t.post(CHAT, chat({ max_tokens: 1 }));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'model_loading' } });
  });

  test('GET /v1/models lists the configured model', async () => {
    t = await startMock({ modelName: 'tiny-llama' });
    const res = await fetch(`${t.url}/v1/models`);
    expect(await res.json()).toMatchObject({ object: 'list', data: [{ id: 'tiny-llama', object: 'model' }] });
  });

  test('/metrics is Prometheus text from a private registry per server', async () => {
    t = await startMock({ slots: 3 });
    const other = await startMock({ slots: 5 });
    try {
      const res = await fetch(`${t.url}/metrics`);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await res.text()).toMatch(/^modeldock_mock_slots 3$/m);
      expect(await (await fetch(`${other.url}/metrics`)).text()).toMatch(/^modeldock_mock_slots 5$/m);
    } finally {
      await other.mock.close(0);
    }
  });
});

describe('bad input → OpenAI error shape', { timeout: 20_000 }, () => {
  test.each([
    ['not JSON', CHAT, '{"model":', null],
    ['missing messages', CHAT, { model: 'mock-model' }, 'messages'],
    ['empty messages', CHAT, chat({ messages: [] }), 'messages'],
    ['unknown role', CHAT, chat({ messages: [{ role: 'robot', content: 'x' }] }), 'messages[0].role'],
    ['max_tokens 0', CHAT, chat({ max_tokens: 0 }), 'max_tokens'],
    ['max_tokens not an integer', CHAT, chat({ max_tokens: 1.5 }), 'max_tokens'],
    ['n > 1', CHAT, chat({ n: 2 }), 'n'],
    ['stream not boolean', CHAT, chat({ stream: 'yes' }), 'stream'],
    ['prompt of the wrong type', '/v1/completions', { model: 'mock-model', prompt: 42 }, 'prompt'],
    ['missing model', '/v1/completions', { prompt: 'x' }, 'model'],
  ])('%s → 400', async (_, path, body, param) => {
    t = await startMock();
    const res = await t.post(path, body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json');
    const json = (await res.json()) as { error: Record<string, unknown> };
    expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(json.error).toMatchObject({ type: 'invalid_request_error', param, message: expect.any(String) });
  });

  test('"default" names the served model: 200 with the served name in the answer', async () => {
    t = await startMock({ modelName: 'tiny-llama' });
    const res = await t.post(CHAT, chat({ model: 'default' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ model: 'tiny-llama' });
  });

  test('unknown model → 404 model_not_found (counted as invalid); unknown route → 404', async () => {
    t = await startMock();
    const res = await t.post(CHAT, chat({ model: 'gpt-9' }));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { param: 'model', code: 'model_not_found' } });
    expect((await fetch(`${t.url}/v1/nothing`)).status).toBe(404);
    expect(await (await fetch(`${t.url}/metrics`)).text()).toMatch(
      /^modeldock_mock_requests_total\{endpoint="chat_completions",outcome="invalid"\} 1$/m,
    );
  });

  test('oversized body → 413', async () => {
    t = await startMock({ maxBodyBytes: 1024 });
    const res = await t.post(CHAT, chat({ messages: [{ role: 'user', content: 'x'.repeat(4096) }] }));
    expect(res.status).toBe(413);
  });
});

/** One stream generating (of `maxTokens`) in the only slot, and one queued behind it. */
async function oneRunningOneQueued(maxTokens: number): Promise<{ running: Promise<Response>; queued: Promise<Response> }> {
  const running = t.post(CHAT, chat({ stream: true, max_tokens: maxTokens }));
  await waitFor(async () => slotState(await t.scrape()).busy === 1, 'running');
  const queued = t.post(CHAT, chat({ stream: true }));
  await waitFor(async () => slotState(await t.scrape()).queued === 1, 'queued');
  return { running, queued };
}

/** Once the drain began: the queued request is refused (503) and the server no longer listens; the running stream, released, ends with [DONE]. */
async function expectQueuedRefusedRunningFinished(queued: Promise<Response>, running: Promise<Response>, gate: { open(): void }): Promise<void> {
  const rejected = await queued;
  expect(rejected.status).toBe(503);
  expect(await rejected.json()).toMatchObject({ error: { code: 'shutting_down' } });
  expect(t.mock.server.listening).toBe(false);
  gate.open();
  const res = await running;
  if (!res.body) throw new Error('no body');
  expect((await readOpenAiStream(res.body)).done).toBe(true);
}

describe('graceful shutdown', { timeout: 20_000 }, () => {
  test('queued requests get 503 at once, running streams finish within the grace period', async () => {
    const gate = createGate();
    t = await startMock({ slots: 1, sleep: gate.sleep });
    const { running, queued } = await oneRunningOneQueued(4);

    const closed = t.mock.close(60_000);
    await expectQueuedRefusedRunningFinished(queued, running, gate);
    await closed;
    expect(t.events.map((e) => e.msg)).not.toContain('grace_period_over');
  });

  test('streams still running when the grace period ends are cut off without [DONE]', async () => {
    const gate = createGate(); // never opened: the stream would hang forever
    t = await startMock({ slots: 1, sleep: gate.sleep });
    const res = await t.post(CHAT, chat({ stream: true }));
    await t.mock.close(20);
    if (!res.body) throw new Error('no body');
    const stream = await readOpenAiStream(res.body);
    expect(stream.done).toBe(false);
    expect(stream.chunks.at(-1)).toMatchObject({ error: { code: 'shutting_down' } });
    const text = await t.mock.metrics.registry.metrics();
    expect(text).toMatch(/outcome="aborted_shutdown"\} 1$/m);
    expect(t.events.map((e) => e.msg)).toContain('grace_period_over');
  });
});

describe('graceful shutdown with a delay (MOCK_SHUTDOWN_DELAY_S)', { timeout: 20_000 }, () => {
  /** A shutdown delay that ends when the test says so. */
  function heldDelay() {
    const asked: number[] = [];
    let end = () => {};
    const ended = new Promise<void>((resolve) => (end = resolve));
    return { asked, end, pauseBeforeDrain: (ms: number) => (asked.push(ms), ended) };
  }
  const probe = async (path: string) => {
    const res = await fetch(`${t.url}${path}`);
    return { status: res.status, body: await res.json() };
  };

  test('during the delay: unready but listening, new completions 503, running and queued requests go on', async () => {
    const gate = createGate();
    const held = heldDelay();
    t = await startMock({ slots: 1, sleep: gate.sleep, shutdownDelayMs: 45_000, pauseBeforeDrain: held.pauseBeforeDrain });
    const running = t.post(CHAT, chat({ stream: true, max_tokens: 3 }));
    await waitFor(async () => slotState(await t.scrape()).busy === 1, 'running');
    const queued = t.post(CHAT, chat({ stream: true, max_tokens: 2 }));
    await waitFor(async () => slotState(await t.scrape()).queued === 1, 'queued');

    let closed = false;
    const closing = t.mock.close(60_000).then(() => (closed = true));
    expect(held.asked).toEqual([45_000]);
    expect(t.mock.server.listening).toBe(true);
    expect(await probe('/readyz')).toEqual({ status: 503, body: { status: 'draining' } });
    expect(await probe('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const fresh = await t.post(CHAT, chat());
    expect(fresh.status).toBe(503);
    expect(await fresh.json()).toMatchObject({ error: { code: 'shutting_down' } });

    gate.open();
    for (const pending of [running, queued]) {
      const res = await pending;
      expect(res.status).toBe(200);
      if (!res.body) throw new Error('no body');
      expect((await readOpenAiStream(res.body)).done).toBe(true);
    }
    expect(closed).toBe(false); // all work done, but the delay has not ended
    expect(t.mock.server.listening).toBe(true);

    held.end();
    await closing;
    expect(t.mock.server.listening).toBe(false);
    const log = t.events.filter((e) => e.msg === 'shutdown_delay' || e.msg === 'draining' || e.msg === 'closed');
    expect(log).toEqual([
      { msg: 'shutdown_delay', delayMs: 45_000, active: 1, queued: 1 },
      { msg: 'draining', active: 0, rejectedQueued: 0, graceMs: 60_000 },
      { msg: 'closed' },
    ]);
  });

  test('when the delay ends, the ordinary drain: still queued → 503, running ones get the grace period', async () => {
    const gate = createGate();
    const held = heldDelay();
    t = await startMock({ slots: 1, sleep: gate.sleep, shutdownDelayMs: 1_000, pauseBeforeDrain: held.pauseBeforeDrain });
    const { running, queued } = await oneRunningOneQueued(3);

    const closing = t.mock.close(60_000);
    held.end();
    await expectQueuedRefusedRunningFinished(queued, running, gate);
    await closing;
    expect(t.events.map((e) => e.msg)).not.toContain('grace_period_over');
  });

  test('the default pause is a real timer: close() with nothing in flight takes the delay', async () => {
    t = await startMock({ shutdownDelayMs: 300 });
    const start = performance.now();
    await t.mock.close(0);
    expect(performance.now() - start).toBeGreaterThanOrEqual(290);
  });

  test('no delay by default: the drain begins at once, as before', async () => {
    t = await startMock();
    const closing = t.mock.close(60_000);
    expect(t.mock.server.listening).toBe(false);
    await closing;
    expect(t.events.map((e) => e.msg)).not.toContain('shutdown_delay');
  });
});
