// The decode loop of one request holding a slot: one `sleep` per token, then write the
// chunk (SSE) or collect it (JSON). Stops at once when `signal` aborts.
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn, setTimeout as delay } from 'node:timers/promises';
import { countPromptTokens, startGeneration } from './generate.ts';
import { sendJson, startSse, writeSse } from './http-io.ts';
import type { MockMetrics, Outcome } from './metrics.ts';
import { openAiError, type Job } from './openai.ts';
import { dialects, usage, type Endpoint } from './responses.ts';

/** Waits `ms` (one decode step); must reject promptly when `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const realSleep: Sleep = async (ms, signal) => {
  if (ms > 0) await delay(ms, undefined, { signal });
  else await nextTurn(undefined, { signal });
};

export type TokenLoopDeps = {
  metrics: MockMetrics;
  tokenDelayMs: number;
  now: () => number;
  sleep: Sleep;
  nextId: () => number;
  shutdownSignal: AbortSignal;
};

export type TokenLoopContext = { reqId: string; arrivedAt: number; signal: AbortSignal };

export async function generateTokenStream(
  deps: TokenLoopDeps,
  endpoint: Endpoint,
  job: Job,
  res: ServerResponse,
  { reqId, arrivedAt, signal }: TokenLoopContext,
): Promise<Outcome> {
  const dialect = dialects[endpoint];
  const meta = { id: `${dialect.idPrefix}mock-${deps.nextId()}`, created: Math.floor(deps.now() / 1000), model: job.model };
  const generation = startGeneration({ prompt: job.prompt, seed: job.seed, maxTokens: job.maxTokens });
  const emit = (chunk: object) => writeSse(res, JSON.stringify(chunk), signal);
  const parts: string[] = [];
  try {
    if (job.stream) {
      startSse(res, { 'x-request-id': reqId });
      const opening = dialect.opening(meta);
      if (opening) await emit(opening);
    }
    for (let i = 0; i < generation.count; i++) {
      await deps.sleep(deps.tokenDelayMs, signal);
      signal.throwIfAborted();
      const token = generation.tokens.next().value;
      if (i === 0) deps.metrics.timeToFirstToken.observe((deps.now() - arrivedAt) / 1000);
      deps.metrics.tokens.inc();
      if (job.stream) await emit(dialect.token(meta, token));
      else parts.push(token);
    }
    const totals = usage(countPromptTokens(job.prompt), generation.count);
    if (!job.stream) {
      sendJson(res, 200, dialect.whole(meta, parts.join(''), generation.finishReason, totals), { 'x-request-id': reqId });
      return 'completed';
    }
    await emit(dialect.closing(meta, generation.finishReason));
    if (job.includeUsage) await emit(dialect.usageChunk(meta, totals));
    res.end('data: [DONE]\n\n');
    return 'completed';
  } catch (error) {
    if (!signal.aborted) throw error;
    if (!deps.shutdownSignal.aborted) return 'cancelled_running';
    endForShutdown(res);
    return 'aborted_shutdown';
  }
}

/** Grace period over: tell the client why its response stops (no `[DONE]`). */
function endForShutdown(res: ServerResponse): void {
  if (res.destroyed) return;
  const body = openAiError('server shut down before the response finished', 'service_unavailable', null, 'shutting_down');
  if (res.headersSent) res.end(`data: ${JSON.stringify(body)}\n\n`);
  else sendJson(res, 503, body, { connection: 'close' });
}
