// POST /v1/chat/completions and /v1/completions: validate → wait for a slot → generate
// (streamed as SSE or as one JSON body). Every request ends with exactly one outcome.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { generateTokenStream, type Sleep } from './token-loop.ts';
import {
  HttpError,
  ShuttingDownError,
  clientGoneSignal,
  readJsonBody,
  sendError,
} from './http-io.ts';
import type { MockMetrics, Outcome } from './metrics.ts';
import { chatCompletionRequest, chatJob, completionJob, completionRequest, openAiError, validationError, type Job } from './openai.ts';
import type { Endpoint } from './responses.ts';
import { QueueFullError, type Lease, type SlotScheduler } from './slots.ts';

export type Log = (entry: Record<string, unknown>) => void;

/** A model name every mock accepts besides MODEL_NAME. */
const DEFAULT_MODEL_ALIAS = 'default';

export type CompletionDeps = {
  scheduler: SlotScheduler;
  metrics: MockMetrics;
  modelName: string;
  tokenDelayMs: number;
  retryAfterSeconds: number;
  maxBodyBytes: number;
  now: () => number;
  sleep: Sleep;
  log: Log;
  nextId: () => number;
  isReady: () => boolean;
  isDraining: () => boolean;
  /** Aborted when the shutdown grace period runs out. */
  shutdownSignal: AbortSignal;
};

export async function serveCompletion(
  deps: CompletionDeps,
  endpoint: Endpoint,
  req: IncomingMessage,
  res: ServerResponse,
  reqId: string,
): Promise<void> {
  // Listen for the client going away before anything async happens, or we could miss it.
  const clientGone = clientGoneSignal(res);
  const arrivedAt = deps.now();
  let outcome: Outcome;
  try {
    const job = parseJob(endpoint, await readJsonBody(req, deps.maxBodyBytes));
    outcome = await admitAndRun(deps, endpoint, job, res, reqId, arrivedAt, clientGone);
  } catch (error) {
    const httpError = error instanceof HttpError ? error : internalError(error, clientGone);
    sendError(res, httpError);
    outcome = httpError.outcome;
    if (outcome === 'error') deps.log({ msg: 'request_error', reqId, error: String(error) });
  }
  deps.metrics.countRequest(endpoint, outcome);
  deps.log({ msg: 'request_done', reqId, endpoint, outcome, ms: deps.now() - arrivedAt });
}

function parseJob(endpoint: Endpoint, body: unknown): Job {
  const parsed = endpoint === 'chat_completions' ? chatCompletionRequest.safeParse(body) : completionRequest.safeParse(body);
  if (!parsed.success) throw new HttpError(400, validationError(parsed.error), 'invalid');
  return 'messages' in parsed.data ? chatJob(parsed.data) : completionJob(parsed.data);
}

async function admitAndRun(
  deps: CompletionDeps,
  endpoint: Endpoint,
  job: Job,
  res: ServerResponse,
  reqId: string,
  arrivedAt: number,
  clientGone: AbortSignal,
): Promise<Outcome> {
  // `default` names whatever this server serves: the CLI's and the dashboard's examples use it,
  // as they cannot know the name a tenant's server was started with.
  if (job.model !== deps.modelName && job.model !== DEFAULT_MODEL_ALIAS) {
    const body = openAiError(`The model '${job.model}' does not exist`, 'invalid_request_error', 'model', 'model_not_found');
    throw new HttpError(404, body, 'invalid');
  }
  if (deps.isDraining()) throw shuttingDown();
  if (!deps.isReady()) {
    const body = openAiError('model is still loading', 'service_unavailable', null, 'model_loading');
    throw new HttpError(503, body, 'unavailable', { 'retry-after': String(deps.retryAfterSeconds) });
  }

  const signal = AbortSignal.any([clientGone, deps.shutdownSignal]);
  let lease: Lease;
  try {
    if (deps.scheduler.busy >= deps.scheduler.slots) deps.log({ msg: 'queued', reqId, depth: deps.scheduler.queued + 1 });
    lease = await deps.scheduler.acquire(signal);
  } catch (error) {
    if (error instanceof QueueFullError) {
      const body = openAiError(`${error.message}; retry later`, 'rate_limit_error', null, 'queue_full');
      throw new HttpError(429, body, 'rejected_queue_full', { 'retry-after': String(deps.retryAfterSeconds) });
    }
    if (error instanceof ShuttingDownError) throw shuttingDown();
    if (clientGone.aborted) return 'cancelled_queued';
    throw error;
  }

  deps.metrics.queueWait.observe(lease.waitedMs / 1000);
  deps.log({ msg: 'started', reqId, waitedMs: lease.waitedMs });
  try {
    return await generateTokenStream(deps, endpoint, { ...job, model: deps.modelName }, res, { reqId, arrivedAt, signal });
  } finally {
    lease.release();
  }
}

function shuttingDown(): HttpError {
  const body = openAiError('server is shutting down', 'service_unavailable', null, 'shutting_down');
  return new HttpError(503, body, 'unavailable', { connection: 'close' });
}

function internalError(error: unknown, clientGone: AbortSignal): HttpError {
  const body = openAiError(`internal error: ${String(error)}`, 'server_error');
  return new HttpError(500, body, clientGone.aborted ? 'cancelled_queued' : 'error');
}
