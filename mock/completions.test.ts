import { afterEach, describe, expect, test } from 'vitest';
import { metricValue } from '../schema/prom-text.ts';
import { readOpenAiStream, readSse } from '../test/support/sse-client.ts';
import { createGate, slotState, startMock, waitFor, type TestMock } from '../test/support/mock-server.ts';

const CHAT = '/v1/chat/completions';
const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'mock-model',
  messages: [{ role: 'user', content }],
  ...extra,
});

async function streamOf(response: Promise<Response>) {
  const res = await response;
  expect(res.status).toBe(200);
  if (!res.body) throw new Error('no body');
  return readOpenAiStream(res.body);
}

const outcome = async (t: TestMock, value: string) =>
  metricValue(await t.scrape(), 'modeldock_mock_requests_total', { outcome: value });

let t: TestMock;
afterEach(() => t.mock.close(0));

describe('slots and queue', { timeout: 20_000 }, () => {
  test('5 concurrent streams: exactly 2 run, 3 queue, served FIFO, all end with [DONE]', async () => {
    const gate = createGate();
    t = await startMock({ slots: 2, sleep: gate.sleep });
    const streams: Promise<Awaited<ReturnType<typeof streamOf>>>[] = [];
    for (let i = 0; i < 5; i++) {
      streams.push(streamOf(t.post(CHAT, chat(`request ${i}`, { stream: true, max_tokens: 8 }), { reqId: `r${i}` })));
      // One at a time, so the arrival order (and so the expected FIFO order) is defined.
      await waitFor(async () => {
        const { busy, queued } = slotState(await t.scrape());
        return busy + queued === i + 1;
      }, `request r${i} admitted`);
    }
    expect(slotState(await t.scrape())).toEqual({ busy: 2, queued: 3 });
    expect(t.startedOrder()).toEqual(['r0', 'r1']);

    gate.open();
    const results = await Promise.all(streams);
    for (const result of results) {
      expect(result.done).toBe(true);
      expect(result.chunks.filter((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content)).toHaveLength(8);
    }
    expect(t.startedOrder()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    const samples = await t.scrape();
    expect(slotState(samples)).toEqual({ busy: 0, queued: 0 });
    expect(metricValue(samples, 'modeldock_mock_requests_total', { outcome: 'completed' })).toBe(5);
    expect(metricValue(samples, 'modeldock_mock_generated_tokens_total')).toBe(40);
    expect(metricValue(samples, 'modeldock_mock_queue_wait_seconds_count')).toBe(5);
    expect(metricValue(samples, 'modeldock_mock_time_to_first_token_seconds_count')).toBe(5);
  });

  test('a client aborting mid-stream frees its slot: the queued request starts promptly', async () => {
    t = await startMock({ slots: 2, tokenDelayMs: 2 });
    const endless = chat('long', { stream: true, max_tokens: 1_000_000 }); // ~30 min at 2 ms/token
    const a = new AbortController();
    const others = new AbortController();
    const first = await t.post(CHAT, endless, { signal: a.signal, reqId: 'a' });
    await t.post(CHAT, endless, { signal: others.signal, reqId: 'b' });
    const queued = t.post(CHAT, endless, { signal: others.signal, reqId: 'c' });
    await waitFor(async () => slotState(await t.scrape()).queued === 1, 'c queued');

    if (!first.body) throw new Error('no body');
    let seen = 0;
    for await (const event of readSse(first.body)) {
      if (++seen === 3) break; // opening chunk + 2 tokens: really mid-stream
      expect(event.data).not.toBe('[DONE]');
    }
    a.abort();

    const started = await queued; // headers arrive once c holds a slot; would take ~30 min otherwise
    expect(started.status).toBe(200);
    expect(t.startedOrder()).toEqual(['a', 'b', 'c']);
    await waitFor(async () => (await outcome(t, 'cancelled_running')) === 1, 'a counted as cancelled');
    expect(slotState(await t.scrape())).toEqual({ busy: 2, queued: 0 });
    others.abort();
    await waitFor(async () => slotState(await t.scrape()).busy === 0, 'all slots free after abort');
  });

  test('a client aborting while queued leaves the queue at once and never gets a slot', async () => {
    const gate = createGate();
    t = await startMock({ slots: 1, sleep: gate.sleep });
    const running = streamOf(t.post(CHAT, chat('a', { stream: true, max_tokens: 3 }), { reqId: 'a' }));
    await waitFor(async () => slotState(await t.scrape()).busy === 1, 'a running');
    const leaving = new AbortController();
    const left = t.post(CHAT, chat('b', { stream: true }), { signal: leaving.signal, reqId: 'b' });
    await waitFor(async () => slotState(await t.scrape()).queued === 1, 'b queued');
    const staying = streamOf(t.post(CHAT, chat('c', { stream: true, max_tokens: 3 }), { reqId: 'c' }));
    await waitFor(async () => slotState(await t.scrape()).queued === 2, 'c queued');

    leaving.abort();
    await expect(left).rejects.toThrow();
    await waitFor(async () => slotState(await t.scrape()).queued === 1, 'b removed from the queue');
    await waitFor(async () => (await outcome(t, 'cancelled_queued')) === 1, 'b counted');

    gate.open();
    expect((await running).done).toBe(true);
    expect((await staying).done).toBe(true);
    expect(t.startedOrder()).toEqual(['a', 'c']);
  });

  test('queue full → 429 with Retry-After and an OpenAI error body', async () => {
    const gate = createGate();
    t = await startMock({ slots: 1, queueLimit: 1, sleep: gate.sleep, retryAfterSeconds: 2 });
    const a = streamOf(t.post(CHAT, chat('a', { stream: true, max_tokens: 2 })));
    const b = streamOf(t.post(CHAT, chat('b', { stream: true, max_tokens: 2 })));
    await waitFor(async () => slotState(await t.scrape()).queued === 1, 'b queued');

    const rejected = await t.post(CHAT, chat('c', { stream: true }));
    expect(rejected.status).toBe(429);
    expect(rejected.headers.get('retry-after')).toBe('2');
    expect(await rejected.json()).toEqual({
      error: { message: expect.stringMatching(/queue is full/), type: 'rate_limit_error', param: null, code: 'queue_full' },
    });
    expect(await outcome(t, 'rejected_queue_full')).toBe(1);
    gate.open();
    expect((await a).done && (await b).done).toBe(true);
  });
});

describe('generated content', { timeout: 20_000 }, () => {
  const text = async (body: object) => {
    const res = await t.post(CHAT, body);
    expect(res.status).toBe(200);
    return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
  };

  test('same prompt + seed → same text; another seed → different text; stream equals non-stream', async () => {
    t = await startMock({ tokenDelayMs: 0 });
    const one = await text(chat('hello', { seed: 1, max_tokens: 30 }));
    expect(await text(chat('hello', { seed: 1, max_tokens: 30 }))).toBe(one);
    expect(await text(chat('hello', { seed: 2, max_tokens: 30 }))).not.toBe(one);
    expect((await streamOf(t.post(CHAT, chat('hello', { seed: 1, max_tokens: 30, stream: true })))).text).toBe(one);
  });

  test('max_tokens is honoured in chunks, finish_reason and usage', async () => {
    t = await startMock({ tokenDelayMs: 0 });
    const stream = await streamOf(
      t.post(CHAT, chat('count me', { stream: true, max_tokens: 7, stream_options: { include_usage: true } })),
    );
    const tokenChunks = stream.chunks.filter((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content);
    expect(tokenChunks).toHaveLength(7);
    expect(stream.chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 7, total_tokens: 10 } });

    const res = await t.post('/v1/completions', { model: 'mock-model', prompt: 'count me', max_tokens: 5 });
    expect(await res.json()).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, finish_reason: 'length' }],
      usage: { completion_tokens: 5 },
    });
  });

  test('without max_tokens, chat stops naturally with finish_reason stop', async () => {
    t = await startMock({ tokenDelayMs: 0 });
    const res = await t.post(CHAT, chat('natural'));
    expect(await res.json()).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: 'stop' }] });
  });
});
