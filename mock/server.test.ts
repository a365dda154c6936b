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

describe('graceful shutdown', { timeout: 20_000 }, () => {
  test('queued requests get 503 at once, running streams finish within the grace period', async () => {
    const gate = createGate();
    t = await startMock({ slots: 1, sleep: gate.sleep });
    const running = t.post(CHAT, chat({ stream: true, max_tokens: 4 }));
    await waitFor(async () => slotState(await t.scrape()).busy === 1, 'running');
    const queued = t.post(CHAT, chat({ stream: true }));
    await waitFor(async () => slotState(await t.scrape()).queued === 1, 'queued');

    const closed = t.mock.close(60_000);
    const rejected = await queued;
    expect(rejected.status).toBe(503);
    expect(await rejected.json()).toMatchObject({ error: { code: 'shutting_down' } });
    expect(t.mock.server.listening).toBe(false);

    gate.open();
    const res = await running;
    if (!res.body) throw new Error('no body');
    expect((await readOpenAiStream(res.body)).done).toBe(true);
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
