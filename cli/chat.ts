// `modeldock chat`: one chat completion through the edge, streamed. POST
// <API>/v1/models/<id>/chat/completions with `stream: true` answers Server-Sent Events — `data:
// {chunk}` … `data: [DONE]` — and each chunk's `choices[0].delta.content` is handed on as it
// arrives. The request has a deadline for its response headers (--request-timeout) and none on
// the stream: a long reply is not an error; Ctrl-C is how a tenant ends one (the `interrupt`
// signal). Every failure is a CliError with the CLI's exit codes; the key only ever goes in the
// Authorization header.
import { z } from 'zod';
import { causeOf, CliError, oneLine } from './api.ts';
import { EXIT, exitForApiError } from './exit-codes.ts';
import { SseParser } from '../schema/sse.ts';
import { StreamText } from './stream-text.ts';

export interface ChatOptions {
  url: string;
  key: string;
  /** Deadline for the response headers (and for an error's body); the stream itself has none. */
  requestTimeoutMs: number;
  fetch: typeof fetch;
}

export interface ChatRequest {
  id: string;
  model: string;
  message: string;
  system?: string;
  maxTokens?: number;
}

type Message = { role: 'system' | 'user'; content: string };

/** The OpenAI chat completion request the tenant's server receives. */
export function chatBody(r: ChatRequest): { model: string; messages: Message[]; stream: true; max_tokens?: number } {
  const messages: Message[] = [...(r.system === undefined ? [] : [{ role: 'system' as const, content: r.system }]), { role: 'user', content: r.message }];
  return { model: r.model, messages, stream: true, ...(r.maxTokens === undefined ? {} : { max_tokens: r.maxTokens }) };
}

export const chatPath = (id: string): string => `/v1/models/${encodeURIComponent(id)}/chat/completions`;

// The edge's errors carry a code; an error the tenant's server sends through may be OpenAI's own
// shape, whose code may be null. Only the message is required.
const errorBody = z.object({ error: z.looseObject({ message: z.string(), code: z.string().nullish() }) });
const chunk = z.looseObject({
  choices: z.array(z.looseObject({ delta: z.looseObject({ content: z.string().nullish() }).nullish() })).optional(),
  error: errorBody.shape.error.optional(),
});
const completion = z.looseObject({ choices: z.array(z.looseObject({ message: z.looseObject({ content: z.string().nullish() }) })).min(1) });

/** One event's data: the end of the reply, or the text it adds. Throws CliError on an error event or data that is not a chunk. */
export function readEvent(data: string): { done: true } | { done: false; text: string } {
  if (data === '[DONE]') return { done: true };
  let parsed: z.output<typeof chunk>;
  try {
    parsed = chunk.parse(JSON.parse(data));
  } catch {
    throw new CliError(EXIT.error, `unexpected data in the reply stream: ${oneLine(data).slice(0, 80)}`);
  }
  if (parsed.error) throw new CliError(EXIT.unavailable, `the model failed mid-reply: ${oneLine(parsed.error.message)}`, parsed.error.code ?? undefined);
  return { done: false, text: parsed.choices?.[0]?.delta?.content ?? '' };
}

const interrupted = () => new CliError(EXIT.interrupted, 'interrupted');

/**
 * Sends the request and calls `write` with each piece of the reply, made printable (newlines and
 * tabs kept), as it arrives. Resolves once the reply is complete; throws CliError otherwise.
 */
export async function streamChat(opts: ChatOptions, request: ChatRequest, write: (text: string) => void, interrupt: AbortSignal): Promise<void> {
  const base = opts.url.replace(/\/+$/, '');
  const path = chatPath(request.id);
  const headerDeadline = new AbortController();
  const timer = setTimeout(() => headerDeadline.abort(), opts.requestTimeoutMs);
  const signal = AbortSignal.any([interrupt, headerDeadline.signal]);
  try {
    let res: Response;
    try {
      res = await opts.fetch(`${base}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${opts.key}`, 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' },
        body: JSON.stringify(chatBody(request)),
        signal,
        // A redirect would carry the key elsewhere.
        redirect: 'error',
      });
    } catch (err) {
      throw unreachable(err as Error, base, opts.requestTimeoutMs, interrupt, headerDeadline.signal);
    }
    if (!res.ok) {
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw unreachable(err as Error, base, opts.requestTimeoutMs, interrupt, headerDeadline.signal);
      }
      throw apiError(res, text, path);
    }
    clearTimeout(timer);
    if (!res.body) throw new CliError(EXIT.error, `POST ${path}: HTTP ${res.status} without a body`);
    if (/^application\/json\b/i.test(res.headers.get('content-type') ?? '')) {
      // A server that does not stream answers with the whole completion at once.
      const whole = completion.safeParse(await readAll(res.body, interrupt));
      if (!whole.success) throw new CliError(EXIT.error, `unexpected response from POST ${path} (HTTP ${res.status})`);
      const text = new StreamText();
      write(text.push(whole.data.choices[0]!.message.content ?? '') + text.end());
      return;
    }
    await readReply(res.body, write, interrupt);
  } finally {
    clearTimeout(timer);
  }
}

async function readReply(body: ReadableStream<Uint8Array>, write: (text: string) => void, interrupt: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const sse = new SseParser();
  const text = new StreamText();
  try {
    for (;;) {
      let piece: ReadableStreamReadResult<Uint8Array>;
      try {
        piece = await reader.read();
      } catch (err) {
        if (interrupt.aborted) throw interrupted();
        throw new CliError(EXIT.unavailable, `the reply stream broke: ${oneLine(causeOf(err as Error))}`);
      }
      const events = sse.push(piece.done ? decoder.decode() : decoder.decode(piece.value, { stream: true }));
      for (const { data } of events) {
        const event = readEvent(data);
        if (event.done) {
          write(text.end());
          return;
        }
        const shown = text.push(event.text);
        if (shown) write(shown);
      }
      if (piece.done) {
        write(text.end());
        throw new CliError(EXIT.unavailable, 'the reply stream ended before [DONE]: the reply may be cut short');
      }
    }
  } finally {
    // Stops the download after [DONE] or an error; the server sees the client go.
    await reader.cancel().catch(() => undefined);
  }
}

async function readAll(body: ReadableStream<Uint8Array>, interrupt: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await new Response(body).text();
  } catch (err) {
    if (interrupt.aborted) throw interrupted();
    throw new CliError(EXIT.unavailable, `the reply broke: ${oneLine(causeOf(err as Error))}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function unreachable(e: Error, base: string, timeoutMs: number, interrupt: AbortSignal, deadline: AbortSignal): CliError {
  if (interrupt.aborted) return interrupted();
  const why = deadline.aborted ? `no answer within ${timeoutMs} ms` : oneLine(causeOf(e));
  return new CliError(EXIT.unavailable, `cannot reach the API at ${base}: ${why}`);
}

function apiError(res: Response, text: string, path: string): CliError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const env = errorBody.safeParse(json);
  if (env.success) {
    const code = env.data.error.code ?? '';
    return new CliError(exitForApiError(res.status, code), oneLine(env.data.error.message), code || undefined);
  }
  return new CliError(exitForApiError(res.status, ''), `POST ${path}: HTTP ${res.status} ${oneLine(res.statusText)}`);
}
