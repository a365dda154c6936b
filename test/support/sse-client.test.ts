import { afterEach, describe, expect, test } from 'vitest';
import { generateTokens } from '../../mock/generate.ts';
import { SseParser, readOpenAiStream, readSse, type SseEvent } from './sse-client.ts';
import { startMock, type TestMock } from './mock-server.ts';

/** A fetch-like body that delivers `bytes` in pieces of the given sizes (cycled). */
function chunkedBody(bytes: Uint8Array, sizes: readonly number[]): ReadableStream<Uint8Array> {
  let offset = 0;
  let turn = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      const size = sizes[turn++ % sizes.length] ?? 1;
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

/** Re-chunk a live body into tiny pieces, so `data:` lines and UTF-8 characters are split. */
function rechunk(body: ReadableStream<Uint8Array>, sizes: readonly number[]): ReadableStream<Uint8Array> {
  let turn = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let offset = 0; offset < chunk.length; ) {
          const size = sizes[turn++ % sizes.length] ?? 1;
          controller.enqueue(chunk.slice(offset, offset + size));
          offset += size;
        }
      },
    }),
  );
}

async function collect(body: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(body)) events.push(event);
  return events;
}

const WIRE =
  ': keep-alive comment\r\n' +
  'data: {"a":"café→"}\r\n\r\n' +
  'event: note\ndata: line one\ndata:line two\nid: 7\n\n' +
  'data\r\rdata: [DONE]\n\n' +
  'data: unterminated';

const EXPECTED: SseEvent[] = [
  { event: 'message', data: '{"a":"café→"}', id: undefined },
  { event: 'note', data: 'line one\nline two', id: '7' },
  { event: 'message', data: '', id: '7' },
  { event: 'message', data: '[DONE]', id: '7' },
];

describe('SseParser / readSse', () => {
  test.each([[[1]], [[2, 3]], [[5, 1, 7]], [[1000]]])('same events whatever the chunking %o', async (sizes) => {
    const events = await collect(chunkedBody(new TextEncoder().encode(WIRE), sizes));
    expect(events).toEqual(EXPECTED);
  });

  test('a CR at the end of one piece and LF at the start of the next are one line break', () => {
    const parser = new SseParser();
    expect(parser.push('data: x\r')).toEqual([]);
    expect(parser.push('\n\r')).toEqual([{ event: 'message', data: 'x', id: undefined }]);
    expect(parser.push('\ndata: y\n\n')).toEqual([{ event: 'message', data: 'y', id: undefined }]);
  });

  test('breaking out of the loop cancels the body', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: 1\n\ndata: 2\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of readSse(body)) {
      expect(event.data).toBe('1');
      break;
    }
    expect(cancelled).toBe(true);
  });
});

describe('reading the real server like a client does', { timeout: 20_000 }, () => {
  let t: TestMock;
  afterEach(() => t.mock.close(0));

  test.each([
    ['/v1/chat/completions', { messages: [{ role: 'user', content: 'stream me' }] }],
    ['/v1/completions', { prompt: 'stream me' }],
  ])('%s: fetch + getReader, split into 1..3-byte pieces, yields every token then [DONE]', async (path, body) => {
    t = await startMock();
    const response = await t.post(path, { model: 'mock-model', stream: true, max_tokens: 40, seed: 3, ...body });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    if (!response.body) throw new Error('no body');
    const stream = await readOpenAiStream(rechunk(response.body, [1, 2, 3]));
    expect(stream.done).toBe(true);
    const prompt = path === '/v1/chat/completions' ? 'user: stream me' : 'stream me';
    expect(stream.text).toBe(generateTokens({ prompt, seed: 3, maxTokens: 40 }).tokens.join(''));
    const last = stream.chunks.at(-1) as { choices: { finish_reason: string }[] };
    expect(last.choices[0]?.finish_reason).toBe('length');
  });
});
