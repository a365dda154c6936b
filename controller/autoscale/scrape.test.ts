import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { metricsUrl, podTargets, scrapePods, type PodTarget, type ScrapedPod, type ScrapeOptions } from './scrape.ts';
import { createGate, startMock, waitFor, type TestMock } from '../../test/support/mock-server.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const options = (extra: Partial<ScrapeOptions> = {}): ScrapeOptions => ({ fetch, timeoutMs: 1000, concurrency: 4, ...extra });
const never = new AbortController().signal;

function targetOf(name: string, url: string): PodTarget {
  const { hostname, port } = new URL(url);
  return { name, ip: hostname, port: Number(port) };
}

async function mockPod(name: string, extra: Parameters<typeof startMock>[0] = {}): Promise<{ t: TestMock; target: PodTarget }> {
  const t = await startMock(extra);
  cleanups.push(() => t.mock.close(0));
  return { t, target: targetOf(name, t.url) };
}

/** A plain node:http server; `handle` may never answer. */
async function plainPod(name: string, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; target: PodTarget }> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { server, target: { name, ip: '127.0.0.1', port: (server.address() as AddressInfo).port } };
}

const VLLM_TEXT = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="llama"} 3.0
vllm:num_requests_running{engine="1",model_name="llama"} 1.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="llama"} 5.0
vllm:num_requests_waiting{engine="1",model_name="llama"} 2.0
`;

describe('scrapePods against real servers', { timeout: 20_000 }, () => {
  test('reads waiting + busy of a loaded mock and an idle one, in the order of the targets', async () => {
    const gate = createGate();
    const loaded = await mockPod('loaded', { slots: 1, sleep: gate.sleep });
    const idle = await mockPod('idle');
    const clients = new AbortController();
    cleanups.push(() => clients.abort());
    const body = { model: 'mock-model', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 8 };
    for (let i = 0; i < 3; i++) void loaded.t.post('/v1/chat/completions', body, { signal: clients.signal }).catch(() => {});
    await waitFor(() => loaded.t.mock.scheduler.busy === 1 && loaded.t.mock.scheduler.queued === 2, '1 generating, 2 waiting');

    const loads = await scrapePods([idle.target, loaded.target], options(), never);
    expect(loads).toEqual([
      { pod: 'idle', ok: true, waiting: 0, busy: 0 },
      { pod: 'loaded', ok: true, waiting: 2, busy: 1 },
    ]);
  });

  test('vLLM names: summed over engines, found by the default list when the mock names are absent', async () => {
    const vllm = await plainPod('vllm', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(VLLM_TEXT));
    expect(await scrapePods([vllm.target], options(), never)).toEqual([{ pod: 'vllm', ok: true, waiting: 7, busy: 4 }]);
  });

  test('a pod that never answers times out within its deadline; the others still succeed', async () => {
    let seen = 0;
    const hung = await plainPod('hung', () => void seen++);
    const a = await mockPod('a');
    const b = await mockPod('b');
    const started = performance.now();
    const loads = await scrapePods([a.target, hung.target, b.target], options({ timeoutMs: 300, concurrency: 3 }), never);
    const elapsed = performance.now() - started;
    expect(seen).toBe(1);
    expect(loads[0]).toEqual({ pod: 'a', ok: true, waiting: 0, busy: 0 });
    expect(loads[1]).toEqual({ pod: 'hung', ok: false, error: `GET ${metricsUrl(hung.target)}: timed out after 300 ms` });
    expect(loads[2]).toEqual({ pod: 'b', ok: true, waiting: 0, busy: 0 });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2000);
  });

  test('a pod that stalls mid-body also meets the deadline', async () => {
    const stalled = await plainPod('stalled', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('modeldock_mock_queue_depth 1\n'); // and never ends
    });
    const [load] = await scrapePods([stalled.target], options({ timeoutMs: 300 }), never);
    expect(load).toEqual({ pod: 'stalled', ok: false, error: `GET ${metricsUrl(stalled.target)}: timed out after 300 ms` });
  });

  test('a 500 is that pod\'s error, with the status', async () => {
    const failing = await plainPod('failing', (_req, res) => res.writeHead(500).end('boom'));
    const ok = await mockPod('ok');
    const loads = await scrapePods([failing.target, ok.target], options(), never);
    expect(loads[0]).toEqual({ pod: 'failing', ok: false, error: `GET ${metricsUrl(failing.target)}: HTTP 500` });
    expect(loads[1]?.ok).toBe(true);
  });

  test('missing metrics: the error names what is missing', async () => {
    const { target } = await mockPod('m');
    const [custom] = await scrapePods([target], options({ metricNames: [{ waiting: 'nope_waiting', busy: 'modeldock_mock_slots_busy' }] }), never);
    expect(custom).toEqual({ pod: 'm', ok: false, error: `GET ${metricsUrl(target)}: no load metrics: missing nope_waiting` });

    const other = await plainPod('other', (_req, res) => res.writeHead(200).end('something_else 1\n'));
    const [load] = await scrapePods([other.target], options(), never);
    expect(load).toMatchObject({ ok: false, error: expect.stringMatching(/missing modeldock_mock_queue_depth and modeldock_mock_slots_busy; or missing vllm:num_requests_waiting and vllm:num_requests_running$/) });
  });

  test('unparsable text is an error, not a zero load', async () => {
    const garbage = await plainPod('garbage', (_req, res) => res.writeHead(200).end('<html>hello</html>\n'));
    const [load] = await scrapePods([garbage.target], options(), never);
    expect(load).toMatchObject({ ok: false, error: expect.stringContaining('unparsable metrics line') });
  });

  test('a body over maxBytes is refused, with or without a content-length', async () => {
    const big = 'modeldock_mock_queue_depth 0\nmodeldock_mock_slots_busy 0\n' + '# padding\n'.repeat(200);
    const sized = await plainPod('sized', (_req, res) => res.writeHead(200, { 'content-length': Buffer.byteLength(big) }).end(big));
    const chunked = await plainPod('chunked', (_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < big.length; i += 100) res.write(big.slice(i, i + 100));
      res.end();
    });
    const loads = await scrapePods([sized.target, chunked.target], options({ maxBytes: 1000 }), never);
    expect(loads.map((l) => (l.ok ? 'ok' : l.error.replace(/^GET \S+: /, '')))).toEqual(['body larger than 1000 bytes', 'body larger than 1000 bytes']);
    const fits = await scrapePods([sized.target, chunked.target], options({ maxBytes: 4000 }), never);
    expect(fits.map((l) => l.ok)).toEqual([true, true]);
  });

  test('at most `concurrency` requests are in flight on the server', async () => {
    let inflight = 0;
    let most = 0;
    const slow = await plainPod('slow', (_req, res) => {
      most = Math.max(most, ++inflight);
      setTimeout(() => {
        inflight--;
        res.writeHead(200).end('modeldock_mock_queue_depth 1\nmodeldock_mock_slots_busy 2\n');
      }, 30);
    });
    const targets = Array.from({ length: 7 }, (_, i) => ({ ...slow.target, name: `p${i}` }));
    const loads = await scrapePods(targets, options({ concurrency: 2 }), never);
    expect(most).toBe(2);
    expect(loads).toEqual(targets.map((t) => ({ pod: t.name, ok: true, waiting: 1, busy: 2 })));
  });

  test('the caller\'s abort rejects promptly, with its reason', async () => {
    let seen = 0;
    const hung = await plainPod('hung', () => void seen++);
    const caller = new AbortController();
    const targets = ['a', 'b', 'c', 'd'].map((name) => ({ ...hung.target, name }));
    const scraping = scrapePods(targets, options({ timeoutMs: 60_000, concurrency: 3 }), caller.signal);
    await waitFor(() => seen === 3, 'three requests arrived');
    const started = performance.now();
    const reason = new Error('controller stopping');
    caller.abort(reason);
    await expect(scraping).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(500);
    expect(seen).toBe(3); // the fourth never started
  });

  test('an already aborted signal rejects without a request, even with no targets', async () => {
    let seen = 0;
    const pod = await plainPod('p', () => void seen++);
    await expect(scrapePods([pod.target], options(), AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    await expect(scrapePods([], options(), AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect(seen).toBe(0);
  });
});

describe('scrapePods with an injected fetch', () => {
  test('a fetch that ignores its signal still meets the deadline', async () => {
    const deaf: typeof fetch = () => new Promise<Response>(() => {});
    const [load] = await scrapePods([{ name: 'p', ip: '10.0.0.1', port: 8000 }], options({ fetch: deaf, timeoutMs: 50 }), never);
    expect(load).toEqual({ pod: 'p', ok: false, error: 'GET http://10.0.0.1:8000/metrics: timed out after 50 ms' });
  });

  test('the URL: IPv6 in brackets, the path option, no redirects followed', async () => {
    const calls: Array<{ url: string; redirect: RequestRedirect | undefined }> = [];
    const recording: typeof fetch = async (input, init) => {
      calls.push({ url: String(input), redirect: init?.redirect });
      return new Response('modeldock_mock_queue_depth 0\nmodeldock_mock_slots_busy 0\n');
    };
    const targets = [
      { name: 'v6', ip: 'fd00::1:2', port: 8000 },
      { name: 'v4', ip: '10.1.2.3', port: 9090 },
    ];
    await scrapePods(targets, options({ fetch: recording, path: '/stats' }), never);
    expect(calls).toEqual([
      { url: 'http://[fd00::1:2]:8000/stats', redirect: 'error' },
      { url: 'http://10.1.2.3:9090/stats', redirect: 'error' },
    ]);
  });

  test('no targets: no requests', async () => {
    expect(await scrapePods([], options({ fetch: () => Promise.reject(new Error('called')) }), never)).toEqual([]);
  });

  test.each([0, 1.5, NaN])('concurrency %s is refused', async (concurrency) => {
    await expect(scrapePods([], options({ concurrency }), never)).rejects.toThrow(RangeError);
  });
});

describe('podTargets', () => {
  const pod = (name: string, { ready = true, ip = `10.0.0.${name.length}`, terminating = false } = {}): ScrapedPod => ({
    metadata: { name, ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    status: { ...(ip ? { podIP: ip } : {}), conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: ready ? 'True' : 'False' }] },
  });

  test('keeps Ready, not terminating pods with an IP; counts the ready ones', () => {
    const pods: ScrapedPod[] = [
      pod('a', { ip: '10.0.0.1' }),
      pod('not-ready', { ready: false }),
      pod('terminating', { terminating: true }),
      pod('no-ip', { ip: '' }),
      { metadata: { name: 'no-status' } },
      { metadata: { name: 'no-ready-condition' }, status: { podIP: '10.0.0.9', conditions: [{ type: 'ContainersReady', status: 'True' }] } },
      pod('b', { ip: 'fd00::7' }),
    ];
    expect(podTargets(pods, 8000)).toEqual({
      targets: [
        { name: 'a', ip: '10.0.0.1', port: 8000 },
        { name: 'b', ip: 'fd00::7', port: 8000 },
      ],
      ready: 3, // a, b and no-ip: ready, but nothing to scrape
    });
  });

  test('no pods', () => {
    expect(podTargets([], 8000)).toEqual({ targets: [], ready: 0 });
  });
});
