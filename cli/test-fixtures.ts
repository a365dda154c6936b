// An admission as the API returns it, for the unit tests of the renderers and decisions; and the CLI run against a fake API.
import type { AdmissionView } from './model.ts';
import { run, type Io } from './run.ts';

export const admission = (over: Partial<AdmissionView> = {}): AdmissionView => ({
  id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K',
  name: 'chat',
  state: 'admitted',
  spec: { image: 'ghcr.io/acme/chat:1', replicas: 2, port: 8000, resources: { cpu: '500m', memory: '1Gi' } },
  createdAt: '2026-12-01T10:00:00.000Z',
  stateChangedAt: '2026-12-01T10:00:00.000Z',
  binding: null,
  endpoint: null,
  releaseBlockedSince: null,
  releaseBlockedPods: null,
  lastError: null,
  deadOutboxRows: 0,
  ...over,
});

/** An admission that autoscales 1..8 (target 10), with the autoscaler's status `status` (null: no decision yet). */
export const autoscaled = (status: AdmissionView['autoscaleStatus'], over: Partial<AdmissionView> = {}): AdmissionView =>
  admission({
    state: 'ready',
    spec: { image: 'ghcr.io/acme/chat:1', replicas: 3, port: 8000, resources: { cpu: '500m', memory: '1Gi' }, autoscale: { minReplicas: 1, maxReplicas: 8, targetQueuePerReplica: 10 } },
    replicas: 3,
    chargedReplicas: 3,
    generation: 4,
    pendingChange: null,
    autoscaleStatus: status,
    ...over,
  });

type Answer = { status: number; body: unknown };

/**
 * Runs the CLI against a fake API: `answers` per "METHOD /path", each list consumed in order (the
 * last one repeats). Not a terminal; the clock stands still and sleeping is instant.
 */
export async function runCli(argv: string[], answers: Record<string, Answer[]>, env: Record<string, string> = { MODELDOCK_URL: 'http://api.test', MODELDOCK_KEY: 'k'.repeat(32) }) {
  const stream = () => {
    let text = '';
    return { write: (s: string) => void (text += s), isTTY: false, style: (_c: string, t: string) => t, text: () => text };
  };
  const stdout = stream();
  const stderr = stream();
  const calls: Array<{ method: string; path: string; body: unknown }> = [];
  const io: Io = {
    stdout,
    stderr,
    env,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      const method = init?.method ?? 'GET';
      calls.push({ method, path: url.pathname, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      const list = answers[`${method} ${url.pathname}`];
      if (!list?.length) return new Response(JSON.stringify({ error: { code: 'not_found', message: `no ${method} ${url.pathname}` } }), { status: 404 });
      const { status, body } = list.length > 1 ? list.shift()! : list[0]!;
      return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    }) as typeof fetch,
    now: () => new Date('2026-12-01T10:05:00.000Z'),
    sleep: async () => undefined,
    readFile: async () => '',
    newIdempotencyKey: () => 'k-1',
    every: () => () => undefined,
    onInterrupt: () => () => undefined,
    version: 'test',
  };
  const code = await run(argv, io);
  return { code, out: stdout.text(), err: stderr.text(), calls };
}
