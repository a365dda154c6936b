// A submit or scale that got no usable answer may still have been made: the error names the
// Idempotency-Key to retry with. A 429 refused it before anything was done: no such hint.
import { describe, expect, it } from 'vitest';
import { EXIT } from './exit-codes.ts';
import { run, type Io, type OutStream } from './run.ts';

function stream(): OutStream & { text(): string } {
  let out = '';
  return { write: (s) => void (out += s), isTTY: false, style: (_c, t) => t, text: () => out };
}

async function submit(status: number, error: { code: string; message: string }): Promise<{ code: number; err: string }> {
  const stderr = stream();
  const io: Io = {
    stdout: stream(),
    stderr,
    env: { MODELDOCK_URL: 'http://api.test', MODELDOCK_KEY: 'k'.repeat(32) },
    fetch: (async () => new Response(JSON.stringify({ error }), { status, headers: { 'Content-Type': 'application/json' } })) as typeof fetch,
    now: () => new Date('2026-12-01T10:05:00.000Z'),
    sleep: async () => undefined,
    readFile: async () => '',
    newIdempotencyKey: () => 'cli-key-1',
    every: () => () => undefined,
    onInterrupt: () => () => undefined,
    version: 'test',
  };
  const code = await run(['submit', '--name', 'chat', '--image', 'img:1'], io);
  return { code, err: stderr.text() };
}

describe('the retry hint of a submit without an answer', () => {
  it('503: the admission may have been made, retry with the same key', async () => {
    const r = await submit(503, { code: 'database_unavailable', message: 'the database is unavailable; retry later' });
    expect(r.code).toBe(EXIT.unavailable);
    expect(r.err).toContain('retry with --idempotency-key cli-key-1');
  });

  it('429 rate_limited: exit 8 (retry later), and no hint: nothing was made', async () => {
    const r = await submit(429, { code: 'rate_limited', message: 'too many requests for this tenant; retry after 10 s' });
    expect(r.code).toBe(EXIT.unavailable);
    expect(r.err).toBe('error: too many requests for this tenant; retry after 10 s\n');
  });
});
