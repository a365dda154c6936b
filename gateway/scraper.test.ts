import { describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../controller/runtime/log.ts';
import { LoadBook } from './load-book.ts';
import { hostPort, Scraper, type ScrapeResult } from './scraper.ts';
import type { Endpoint } from './routes.ts';

const A: Endpoint = { address: '10.0.0.1', port: 8000, pod: 'a' };
const B: Endpoint = { address: '10.0.0.2', port: 8000, pod: 'b' };
const NAMES = ['modeldock_mock_slots_busy', 'modeldock_mock_queue_depth'];

type Answer = string | number | Error | (() => Promise<Response>);
/** A fetch answering by URL: a body, a status, an error to throw, or a function. */
function fakeFetch(answers: Record<string, Answer>) {
  const calls: Array<{ url: string; signal: AbortSignal | undefined }> = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, signal: init?.signal ?? undefined });
    const a = answers[url];
    if (a === undefined) throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    if (a instanceof Error) throw a;
    if (typeof a === 'function') return a();
    if (typeof a === 'number') return new Response('nope', { status: a });
    return new Response(a);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

function scraper(o: { targets: Endpoint[]; answers: Record<string, Answer>; book?: LoadBook; now?: () => number; log?: ReturnType<typeof createLogger>; maxBytes?: number; timeoutMs?: number }) {
  const book = o.book ?? new LoadBook();
  const results: ScrapeResult[] = [];
  const { fetch, calls } = fakeFetch(o.answers);
  const s = new Scraper({
    targets: () => o.targets,
    book,
    metricNames: NAMES,
    intervalMs: 5,
    now: o.now ?? (() => 1000),
    log: o.log ?? silentLogger,
    fetch,
    maxBytes: o.maxBytes,
    timeoutMs: o.timeoutMs,
    onResult: (r) => results.push(r),
  });
  return { s, book, calls, results };
}

describe('Scraper', () => {
  it('writes each pod\'s summed gauges, the time and the in-flight count when it was sent', async () => {
    const book = new LoadBook();
    book.acquire('10.0.0.1:8000');
    const { s, calls, results } = scraper({
      targets: [A, B, A],
      book,
      answers: { 'http://10.0.0.1:8000/metrics': 'modeldock_mock_slots_busy 2\nmodeldock_mock_queue_depth 1\n', 'http://10.0.0.2:8000/metrics': 'modeldock_mock_slots_busy 0\n' },
    });
    await s.scrapeOnce();
    expect(calls.map((c) => c.url).sort()).toEqual(['http://10.0.0.1:8000/metrics', 'http://10.0.0.2:8000/metrics']); // A once
    expect(book.loads.get('10.0.0.1:8000')).toEqual({ inflight: 1, scraped: { value: 3, at: 1000, inflightAtScrape: 1 } });
    expect(book.loads.get('10.0.0.2:8000')).toEqual({ inflight: 0, scraped: { value: 0, at: 1000, inflightAtScrape: 0 } });
    expect(results).toEqual(['ok', 'ok']);
  });

  it('every scrape has a deadline', async () => {
    const { s, calls, book, results } = scraper({
      targets: [A],
      timeoutMs: 20,
      answers: {
        'http://10.0.0.1:8000/metrics': () =>
          new Promise<Response>((_, reject) => {
            const signal = calls[0]!.signal!;
            signal.addEventListener('abort', () => reject(signal.reason as Error));
          }),
      },
    });
    book.scraped('10.0.0.1:8000', 5, 0, 0);
    await s.scrapeOnce();
    expect(book.loads.get('10.0.0.1:8000')).toEqual({ inflight: 0 });
    expect(results).toEqual(['error']);
  });

  it('a failed scrape (refused, non-200, no load gauge, too large) drops the pod\'s scrape: it is balanced by in-flight count', async () => {
    const targets = [0, 1, 2, 3].map((n) => ({ address: `10.0.1.${n}`, port: 80, pod: `p${n}` }));
    const { s, book, results } = scraper({
      targets,
      maxBytes: 64,
      answers: {
        'http://10.0.1.1:80/metrics': 503,
        'http://10.0.1.2:80/metrics': 'process_cpu_seconds_total 1\n',
        'http://10.0.1.3:80/metrics': `modeldock_mock_slots_busy 1\n# ${'x'.repeat(100)}\n`,
      },
    });
    for (const t of targets) book.scraped(`${t.address}:80`, 1, 0, 0);
    await s.scrapeOnce();
    for (const t of targets) expect(book.loads.get(`${t.address}:80`), t.pod).toEqual({ inflight: 0 });
    expect(results).toEqual(['error', 'error', 'error', 'error']);
  });

  it('logs a pod\'s failure when it starts and when it ends, not every round', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger({ write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    const answers: Record<string, Answer> = {};
    const { s } = scraper({ targets: [A], answers, log });
    await s.scrapeOnce();
    await s.scrapeOnce();
    answers['http://10.0.0.1:8000/metrics'] = 'modeldock_mock_slots_busy 1\n';
    await s.scrapeOnce();
    await s.scrapeOnce();
    expect(lines.map((l) => [l.msg, l.err])).toEqual([
      ['scrape failed; the pod is balanced by in-flight count', 'fetch failed: ECONNREFUSED'],
      ['scrape recovered', undefined],
    ]);
  });

  it('forgets the endpoints that left every route', async () => {
    const targets = [A];
    const book = new LoadBook();
    book.scraped('10.0.0.9:8000', 1, 0, 0);
    const { s } = scraper({ targets, book, answers: { 'http://10.0.0.1:8000/metrics': 'modeldock_mock_slots_busy 1\n' } });
    await s.scrapeOnce();
    expect([...book.loads.keys()]).toEqual(['10.0.0.1:8000']);
  });

  it('runs rounds until stopped', async () => {
    const { s, calls } = scraper({ targets: [A], answers: { 'http://10.0.0.1:8000/metrics': 'modeldock_mock_slots_busy 1\n' } });
    s.start();
    while (calls.length < 3) await new Promise((r) => setTimeout(r, 5));
    await s.stop();
    const after = calls.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls.length).toBe(after);
  });

  it('brackets an IPv6 address', () => {
    expect(hostPort({ address: 'fd00::1', port: 80 })).toBe('[fd00::1]:80');
    expect(hostPort({ address: '10.0.0.1', port: 80 })).toBe('10.0.0.1:80');
  });
});
