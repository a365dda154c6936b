import { describe, expect, it } from 'vitest';
import { callWhenAllowed } from './when-allowed.ts';

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe('callWhenAllowed', () => {
  it('starts the call before the check has answered, and answers with it once the check passed', async () => {
    const check = deferred<void>();
    let started: AbortSignal | undefined;
    const answer = callWhenAllowed(() => check.promise, async (signal) => ((started = signal), new Response('tokens')), new AbortController().signal);
    await Promise.resolve();
    expect(started?.aborted).toBe(false);
    check.resolve();
    expect(await (await answer).text()).toBe('tokens');
    expect(started?.aborted).toBe(false);
  });

  it('refused: the call is aborted, its answer dropped (its body cancelled), the refusal thrown', async () => {
    let signal: AbortSignal | undefined;
    let cancelled = false;
    const body = new ReadableStream({ cancel: () => void (cancelled = true) });
    const refusal = new Error('409 model_not_ready');
    const answer = callWhenAllowed(() => Promise.reject(refusal), async (s) => ((signal = s), new Response(body)), new AbortController().signal);
    await expect(answer).rejects.toBe(refusal);
    expect(signal?.aborted).toBe(true);
    expect(cancelled).toBe(true);
  });

  it('refused while the call is still waiting: the abort ends it, the refusal is the answer (not the abort)', async () => {
    const refusal = new Error('404');
    const start = (s: AbortSignal) => new Promise<Response>((_, reject) => s.addEventListener('abort', () => reject(s.reason)));
    await expect(callWhenAllowed(() => Promise.reject(refusal), start, new AbortController().signal)).rejects.toBe(refusal);
  });

  it('the client leaving aborts the call too', async () => {
    const client = new AbortController();
    let signal: AbortSignal | undefined;
    const answer = callWhenAllowed(async () => undefined, async (s) => ((signal = s), new Response('x')), client.signal);
    await answer;
    client.abort();
    expect(signal?.aborted).toBe(true);
  });
});
