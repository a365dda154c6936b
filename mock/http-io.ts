// Small node:http helpers: typed HTTP errors, JSON in/out, SSE writes with backpressure,
// and an AbortSignal that fires when the client goes away.
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Outcome } from './metrics.ts';
import { openAiError, type OpenAiError } from './openai.ts';

export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly body: OpenAiError;
  readonly outcome: Outcome;
  readonly headers: Record<string, string>;

  constructor(status: number, body: OpenAiError, outcome: Outcome, headers: Record<string, string> = {}) {
    super(body.error.message);
    this.status = status;
    this.body = body;
    this.outcome = outcome;
    this.headers = headers;
  }
}

export class ClientClosedError extends Error {
  override readonly name = 'ClientClosedError';
}

export class ShuttingDownError extends Error {
  override readonly name = 'ShuttingDownError';
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent || res.destroyed) return;
  sendJson(res, error.status, error.body, error.headers);
}

export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      throw new HttpError(413, openAiError(`request body exceeds ${limitBytes} bytes`, 'invalid_request_error'), 'invalid', {
        connection: 'close',
      });
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, openAiError('could not parse the JSON body of your request', 'invalid_request_error'), 'invalid');
  }
}

/** Aborts when the connection closes before the response finished (client disconnect). */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new ClientClosedError('client closed the connection'));
  });
  return controller.signal;
}

export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
}

/** One `data:` event; waits for 'drain' when the socket buffer is full (slow reader). */
export async function writeSse(res: ServerResponse, data: string, signal: AbortSignal): Promise<void> {
  if (!res.write(`data: ${data}\n\n`)) await once(res, 'drain', { signal });
}
