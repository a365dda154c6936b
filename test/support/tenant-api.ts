// The tenant API as a test calls it: one call with a tenant's key (an answer that is not JSON
// throws an HttpAnswerError with its status and text), and the poll of several admissions until
// each holds (a 5xx ends the wait unless the options allow it). Used by the single-cluster system
// (system.ts) and the multicluster fleet (multicluster.ts).
import { HttpAnswerError, waitFor, type WaitOptions } from './wait.ts';
import type { WorkerInstance } from './worker.ts';

// The API's JSON, loosely typed for assertions.
export type ApiBody = Record<string, unknown> & { error?: { code: string; message: string } };

export type ApiCall = (path: string, init?: { method?: string; body?: unknown; idempotencyKey?: string }) => Promise<{ status: number; body: ApiBody }>;

export function tenantApi(worker: WorkerInstance, key: string): ApiCall {
  return async (path, init = {}) => {
    const method = init.method ?? 'GET';
    const res = await worker.fetch(path, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...(init.idempotencyKey ? { 'Idempotency-Key': init.idempotencyKey } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) as ApiBody };
    } catch {
      throw new HttpAnswerError(`${method} ${path} (not JSON)`, res.status, text);
    }
  };
}

/** Polls GET /requests/{id} of every id until `holds` is true of each; returns their last bodies. */
export function untilAllHold(api: ApiCall, what: string, ids: readonly string[], holds: (body: ApiBody) => boolean, opts?: WaitOptions): Promise<ApiBody[]> {
  if (ids.length === 0) throw new Error(`${what}: no admissions to wait for (it would hold at once)`);
  return waitFor(what, async (poll) => {
    const answers = await Promise.all(ids.map(async (id) => ({ id, ...poll.answer(await api(`/requests/${id}`), `GET /requests/${id}`) })));
    const behind = answers.filter((a) => !holds(a.body));
    const first = behind[0];
    if (!first) return answers.map((a) => a.body);
    poll.answer(first, `${behind.length} of ${ids.length} not there yet, e.g. GET /requests/${first.id}`);
    return undefined;
  }, opts);
}
