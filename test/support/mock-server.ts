// Test fixtures for the mock server: start one on loopback port 0, scrape it, post to it,
// and a gate that holds every decode step until the test opens it (no timing guesses).
import { setImmediate as nextTurn, setTimeout as delay } from 'node:timers/promises';
import { metricValue, parsePrometheus, type Sample } from '../../schema/prom-text.ts';
import { HttpAnswerError } from './wait.ts';
import { createMockServer, type MockServerOptions } from '../../mock/server.ts';
import type { Sleep } from '../../mock/token-loop.ts';

export type TestMock = Awaited<ReturnType<typeof startMock>>;

export async function startMock(options: MockServerOptions = {}) {
  const events: Record<string, unknown>[] = [];
  const mock = createMockServer({ warmupMs: 0, tokenDelayMs: 1, log: (e) => events.push(e), ...options });
  const { url } = await mock.listen(0, '127.0.0.1');
  return {
    mock,
    url,
    events,
    /** reqIds in the order they got a slot. */
    startedOrder: () => events.filter((e) => e.msg === 'started').map((e) => e.reqId),
    /** GET /metrics, parsed; anything but a 200 throws with its status and body (never parsed as no samples). */
    scrape: async (): Promise<Sample[]> => {
      const res = await fetch(`${url}/metrics`);
      const text = await res.text();
      if (res.status !== 200) throw new HttpAnswerError('GET /metrics of the mock', res.status, text);
      return parsePrometheus(text);
    },
    post: (path: string, body: unknown, init: RequestInit & { reqId?: string } = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(init.reqId ? { 'x-request-id': init.reqId } : {}) },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  };
}

export function slotState(samples: readonly Sample[]) {
  return {
    busy: metricValue(samples, 'modeldock_mock_slots_busy'),
    queued: metricValue(samples, 'modeldock_mock_queue_depth'),
  };
}

export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await delay(5);
  }
}

/** Decode steps block until `open()`; blocked steps still reject when their request aborts. */
export function createGate() {
  let opened = false;
  const waiters = new Set<() => void>();
  const sleep: Sleep = (_ms, signal) => {
    if (opened) return nextTurn(undefined, { signal });
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        waiters.delete(go);
        reject(signal.reason);
      };
      const go = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal.aborted) return reject(signal.reason);
      waiters.add(go);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };
  return {
    sleep,
    get waiting() {
      return waiters.size;
    },
    open() {
      opened = true;
      for (const go of waiters) go();
      waiters.clear();
    },
  };
}
