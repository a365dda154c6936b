// `modeldock chat` against a real HTTP server on 127.0.0.1 (node:http, port 0) that streams its
// reply in pieces: the reply reaches stdout as it arrives, errors map to the exit codes, the
// message comes from the arguments or standard input, Ctrl-C and the header deadline end it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { chatBody, chatPath, readEvent } from './chat.ts';
import { EXIT } from './exit-codes.ts';
import { run, type Io, type OutStream } from './run.ts';

const KEY = 'tenant-key-0123456789abcdef';
const ID = '01JD5Y3QW5ZC8Y1G1M5N8D4X7K';
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Seen = { method: string; path: string; headers: IncomingMessage['headers']; body: string };
type Handler = (res: ServerResponse, req: IncomingMessage) => Promise<void> | void;

/** A server answering every request with `handler`; `seen` holds what each request carried, `closed` resolves when a client goes away mid-answer. */
async function serve(handler: Handler): Promise<{ url: string; seen: Seen[]; closed: Promise<void> }> {
  const seen: Seen[] = [];
  let clientGone: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (clientGone = resolve));
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += String(c);
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    res.on('close', () => {
      if (!res.writableEnded) clientGone();
    });
    try {
      await handler(res, req);
    } catch (e) {
      res.destroy(e as Error);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, closed };
}

/** SSE headers, sent at once (as a streaming server does; node:http would hold them until the first write). */
const sse = (res: ServerResponse) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
};
const delta = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const DONE = 'data: [DONE]\n\n';

function stream(): OutStream & { text(): string } {
  let out = '';
  return { write: (s) => void (out += s), isTTY: false, style: (_c, t) => t, text: () => out };
}

interface Running {
  code: Promise<number>;
  out(): string;
  err(): string;
  /** Ctrl-C, as main.ts delivers it. */
  interrupt(): void;
  /** Interrupt handlers still registered. */
  listening(): number;
}

function cli(argv: string[], url: string, opts: { stdin?: string; env?: Record<string, string> } = {}): Running {
  const stdout = stream();
  const stderr = stream();
  const handlers = new Set<() => void>();
  const io: Io = {
    stdout,
    stderr,
    env: { MODELDOCK_URL: url, MODELDOCK_KEY: KEY, ...opts.env },
    fetch,
    now: () => new Date(),
    sleep: (ms) => sleep(ms),
    readFile: async (path) => {
      if (path !== '-' || opts.stdin === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      return opts.stdin;
    },
    newIdempotencyKey: () => 'k-1',
    every: () => () => undefined,
    onInterrupt(h) {
      handlers.add(h);
      return () => void handlers.delete(h);
    },
    version: 'test',
  };
  return {
    code: run(argv, io),
    out: stdout.text,
    err: stderr.text,
    interrupt: () => [...handlers].forEach((h) => h()),
    listening: () => handlers.size,
  };
}

/** Waits until `ok()` holds; fails after `ms`. */
async function until(ok: () => boolean, what: string, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await sleep(5)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

describe('chat request', () => {
  it('the body: the model, an optional system message, the message, stream: true, max_tokens when given', () => {
    expect(chatBody({ id: ID, model: 'default', message: 'hi' })).toEqual({ model: 'default', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(chatBody({ id: ID, model: 'm', message: 'hi', system: 'be brief', maxTokens: 5 })).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      max_tokens: 5,
    });
    expect(chatPath('a/b?c')).toBe('/v1/models/a%2Fb%3Fc/chat/completions');
  });

  it('an event: [DONE], a delta, a chunk without content, an error, data that is not a chunk', () => {
    expect(readEvent('[DONE]')).toEqual({ done: true });
    expect(readEvent('{"choices":[{"delta":{"content":"Hi"}}]}')).toEqual({ done: false, text: 'Hi' });
    expect(readEvent('{"choices":[{"delta":{"role":"assistant"}}]}')).toEqual({ done: false, text: '' });
    expect(readEvent('{"choices":[{"delta":{},"finish_reason":"stop"}]}')).toEqual({ done: false, text: '' });
    expect(() => readEvent('{"error":{"message":"CUDA out of memory","code":null}}')).toThrow(expect.objectContaining({ exitCode: EXIT.unavailable, message: 'the model failed mid-reply: CUDA out of memory' }));
    expect(() => readEvent('not json')).toThrow(expect.objectContaining({ exitCode: EXIT.error }));
    expect(() => readEvent('{"choices":"x"}')).toThrow(expect.objectContaining({ exitCode: EXIT.error }));
  });
});

describe('modeldock chat', () => {
  it('streams the reply to stdout as it arrives, cut anywhere (inside a line, inside a UTF-8 character)', async () => {
    const srv = await serve(async (res) => {
      sse(res);
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant' } }] })}\n\n`);
      const first = Buffer.from(delta('Hel') + delta('lo, café'));
      // Pieces of a few bytes, a pause between each: "é" (two bytes) is split too.
      for (let i = 0; i < first.length; i += 7) {
        res.write(first.subarray(i, i + 7));
        await sleep(2);
      }
      // The rest is sent only once the CLI has printed the first part: a CLI that waits for the
      // end of the reply never gets it, and the test fails.
      await until(() => cli1.out() === 'Hello, café', 'the first tokens on stdout');
      res.write(delta('!\n\tbye'));
      await sleep(20);
      res.end(DONE);
    });
    const cli1 = cli(['chat', ID, 'Say', 'hello'], srv.url);
    expect(await cli1.code).toBe(EXIT.ok);
    expect(cli1.out()).toBe('Hello, café!\n\tbye\n');
    expect(cli1.err()).toBe('');
    expect(cli1.listening()).toBe(0);

    const [req] = srv.seen;
    expect(req).toMatchObject({ method: 'POST', path: `/v1/models/${ID}/chat/completions` });
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers.accept).toContain('text/event-stream');
    expect(JSON.parse(req!.body)).toEqual({ model: 'default', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
  });

  it('--model, --system, --max-tokens; MODELDOCK_MODEL is the default model, the flag wins', async () => {
    const srv = await serve((res) => {
      sse(res);
      res.end(delta('ok\n') + DONE);
    });
    const a = cli(['chat', ID, 'hi', '--system', 'be brief', '--max-tokens', '16'], srv.url, { env: { MODELDOCK_MODEL: 'mock-model' } });
    expect(await a.code).toBe(EXIT.ok);
    expect(a.out()).toBe('ok\n'); // the reply's own newline ends it: none added
    const b = cli(['chat', ID, '--model', 'llama', '--', '-1 is?'], srv.url, { env: { MODELDOCK_MODEL: 'mock-model' } });
    expect(await b.code).toBe(EXIT.ok);
    expect(srv.seen.map((s) => JSON.parse(s.body) as unknown)).toEqual([
      { model: 'mock-model', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }], stream: true, max_tokens: 16 },
      { model: 'llama', messages: [{ role: 'user', content: '-1 is?' }], stream: true },
    ]);
  });

  it('without a message after the id, the message is standard input, read to its end', async () => {
    const srv = await serve((res) => {
      sse(res);
      res.end(delta('4') + DONE);
    });
    const c = cli(['chat', ID], srv.url, { stdin: '  What is\n2 + 2?\n' });
    expect(await c.code).toBe(EXIT.ok);
    expect(c.out()).toBe('4\n');
    expect(JSON.parse(srv.seen[0]!.body)).toMatchObject({ messages: [{ role: 'user', content: 'What is\n2 + 2?' }] });

    const empty = cli(['chat', ID], srv.url, { stdin: ' \n' });
    expect(await empty.code).toBe(EXIT.usage);
    expect(empty.err()).toContain('no message');
    expect(srv.seen).toHaveLength(1);
  });

  it.each([
    [404, EXIT.notFound, { error: { code: 'not_found', message: 'admission not found' } }, 'error: admission not found'],
    [409, EXIT.conflict, { error: { code: 'model_not_ready', message: 'the model is not ready yet (state delivered)' } }, 'not ready yet'],
    [401, EXIT.unauthorized, { error: { code: 'unauthorized', message: 'invalid API key' } }, 'invalid API key'],
    [429, EXIT.unavailable, { error: { code: 'rate_limited', message: 'too many requests for this tenant; retry after 10 s' } }, 'retry after 10 s'],
    [503, EXIT.unavailable, { error: { code: 'unavailable', message: 'no ready pod' } }, 'no ready pod'],
    // The tenant's own server, passed through: OpenAI's shape, a null code.
    [404, EXIT.notFound, { error: { message: "The model 'default' does not exist", type: 'invalid_request_error', code: null } }, "The model 'default' does not exist"],
    [502, EXIT.unavailable, '<html>bad gateway</html>', `HTTP 502`],
  ])('HTTP %i → exit %i: the message on stderr, nothing on stdout', async (status, code, body, message) => {
    const srv = await serve((res) => {
      res.writeHead(status, { 'Content-Type': typeof body === 'string' ? 'text/html' : 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
    const c = cli(['chat', ID, 'hi'], srv.url);
    expect(await c.code).toBe(code);
    expect(c.out()).toBe('');
    expect(c.err()).toContain(message);
    expect(c.err().trimEnd().split('\n')).toHaveLength(1);
    expect(c.err()).not.toContain(KEY);
  });

  it('Ctrl-C aborts the request: the reply so far ends with a newline, exit 130, the server sees the client go', async () => {
    const srv = await serve(async (res) => {
      sse(res);
      res.write(delta('Once upon'));
      await new Promise((resolve) => res.on('close', resolve)); // never ends by itself
    });
    const c = cli(['chat', ID, 'tell me a story'], srv.url);
    await until(() => c.out() === 'Once upon', 'the first tokens');
    expect(c.listening()).toBe(1);
    c.interrupt();
    expect(await c.code).toBe(EXIT.interrupted);
    expect(c.out()).toBe('Once upon\n');
    expect(c.err()).toBe('error: interrupted\n');
    expect(c.listening()).toBe(0);
    await srv.closed;
  });

  it('Ctrl-C before the answer: exit 130, not "cannot reach the API"', async () => {
    const srv = await serve(() => new Promise<void>(() => undefined));
    const c = cli(['chat', ID, 'hi'], srv.url);
    await until(() => srv.seen.length === 1, 'the request');
    c.interrupt();
    expect(await c.code).toBe(EXIT.interrupted);
    expect(c.out()).toBe('');
  });

  it('--request-timeout bounds the wait for the headers, not the reply', async () => {
    const silent = await serve(() => new Promise<void>(() => undefined));
    const c = cli(['chat', ID, 'hi', '--request-timeout', '150ms'], silent.url);
    expect(await c.code).toBe(EXIT.unavailable);
    expect(c.err()).toContain('no answer within 150 ms');

    const slow = await serve(async (res) => {
      sse(res);
      await sleep(200);
      res.write(delta('slow'));
      await sleep(200);
      res.end(delta(' but whole') + DONE);
    });
    const d = cli(['chat', ID, 'hi', '--request-timeout', '100ms'], slow.url);
    expect(await d.code).toBe(EXIT.ok);
    expect(d.out()).toBe('slow but whole\n');
  });

  it('a stream that ends before [DONE], or an error event in it: the reply so far, then exit 8', async () => {
    const cut = await serve((res) => {
      sse(res);
      res.end(delta('half a'));
    });
    const c = cli(['chat', ID, 'hi'], cut.url);
    expect(await c.code).toBe(EXIT.unavailable);
    expect(c.out()).toBe('half a\n');
    expect(c.err()).toContain('ended before [DONE]');

    const failed = await serve((res) => {
      sse(res);
      res.end(delta('so') + `data: ${JSON.stringify({ error: { message: 'CUDA out of memory', code: null } })}\n\n`);
    });
    const d = cli(['chat', ID, 'hi'], failed.url);
    expect(await d.code).toBe(EXIT.unavailable);
    expect(d.out()).toBe('so\n');
    expect(d.err()).toContain('the model failed mid-reply: CUDA out of memory');
  });

  it('no control character of the reply reaches the terminal; line breaks and tabs do', async () => {
    const srv = await serve((res) => {
      sse(res);
      res.end(delta('\u001b[2J\u001b]0;owned\u0007line 1\r\n') + delta('\tline 2\u009b31m\u202e') + DONE);
    });
    const c = cli(['chat', ID, 'hi'], srv.url);
    expect(await c.code).toBe(EXIT.ok);
    expect(c.out()).toBe('[2J]0;ownedline 1\n\tline 231m\n');
    expect(c.out()).not.toMatch(CONTROL);
  });

  it('a server that answers with the whole completion (no stream): its message is printed', async () => {
    const srv = await serve((res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'all at once' } }] }));
    });
    const c = cli(['chat', ID, 'hi'], srv.url);
    expect(await c.code).toBe(EXIT.ok);
    expect(c.out()).toBe('all at once\n');
  });

  it('a redirect is not followed (it would carry the key elsewhere)', async () => {
    const other = await serve((res) => void res.end());
    const srv = await serve((res) => {
      res.writeHead(307, { Location: `${other.url}/steal` });
      res.end();
    });
    const c = cli(['chat', ID, 'hi'], srv.url);
    expect(await c.code).toBe(EXIT.unavailable);
    expect(other.seen).toEqual([]);
  });
});
