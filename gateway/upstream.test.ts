import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { attempt, type AttemptOptions } from './upstream.ts';

const servers: Server[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function server(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

function options(port: number, o: Partial<AttemptOptions> = {}): AttemptOptions {
  const agent = new Agent({ keepAlive: true });
  agents.push(agent);
  return {
    agent,
    endpoint: { address: '127.0.0.1', port, pod: 'p' },
    path: '/v1/completions',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{}'),
    connectTimeoutMs: 1000,
    headersTimeoutMs: 1000,
    signal: new AbortController().signal,
    ...o,
  };
}

const closedPort = async () => {
  const port = await server(() => undefined);
  const s = servers.pop()!;
  await new Promise((r) => s.close(r));
  return port;
};

describe('attempt', () => {
  it('resolves with the response once its headers arrived', async () => {
    const port = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n'); // headers are out; the body goes on
    });
    const r = await attempt(options(port));
    expect(r.kind).toBe('response');
    if (r.kind === 'response') {
      expect(r.res.statusCode).toBe(200);
      r.req.destroy();
    }
  });

  it('a refused connection is a connect error (another pod may be tried)', async () => {
    const r = await attempt(options(await closedPort()));
    expect(r).toMatchObject({ kind: 'connect_error', err: { code: 'ECONNREFUSED' } });
  });

  it('a connection not made within the connect deadline is a connect error', async () => {
    // An address whose name is never resolved: the socket stays connecting.
    const agent = new Agent({ lookup: () => undefined } as unknown as ConstructorParameters<typeof Agent>[0]);
    agents.push(agent);
    const started = Date.now();
    const r = await attempt(options(80, { agent, endpoint: { address: 'never.invalid', port: 80, pod: 'p' }, connectTimeoutMs: 50, headersTimeoutMs: 5000 }));
    expect(r).toMatchObject({ kind: 'connect_error', err: { message: 'connect timed out after 50 ms' } });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('no headers in time: the request is ended (the pod sees its client leave)', async () => {
    let closed = false;
    const port = await server((_req, res) => res.on('close', () => (closed = true)));
    const r = await attempt(options(port, { headersTimeoutMs: 50 }));
    expect(r).toEqual({ kind: 'headers_timeout' });
    await expect.poll(() => closed).toBe(true);
  });

  it('the client leaving while the pod has not answered aborts the request', async () => {
    let [received, closed] = [false, false];
    const port = await server((_req, res) => {
      received = true;
      res.on('close', () => (closed = true));
    });
    const gone = new AbortController();
    const pending = attempt(options(port, { signal: gone.signal }));
    await expect.poll(() => received).toBe(true);
    gone.abort();
    expect(await pending).toEqual({ kind: 'aborted' });
    await expect.poll(() => closed).toBe(true);
  });

  it('a connection that breaks after it was made is not a connect error (the pod may have started)', async () => {
    const port = await server((req) => req.socket.destroy());
    const r = await attempt(options(port));
    expect(r).toMatchObject({ kind: 'error' });
  });

  it('a kept-alive socket the pod has closed meanwhile is a connect error (the request never reached it)', async () => {
    let requests = 0;
    const port = await server((req, res) => {
      requests += 1;
      if (requests === 1) return void res.end('ok');
      req.socket.destroy(); // as if the idle socket had been closed just before the request arrived
    });
    const o = options(port);
    const first = await attempt(o);
    if (first.kind !== 'response') throw new Error(first.kind);
    first.res.resume();
    await new Promise((r) => first.res.on('end', r));
    await new Promise((r) => setImmediate(r)); // the socket goes back to the agent
    expect(await attempt(o)).toMatchObject({ kind: 'connect_error', err: { code: 'ECONNRESET' } });
  });

  it('an already aborted signal sends nothing', async () => {
    let requests = 0;
    const port = await server(() => void (requests += 1));
    const gone = new AbortController();
    gone.abort();
    expect(await attempt(options(port, { signal: gone.signal }))).toEqual({ kind: 'aborted' });
    await new Promise((r) => setTimeout(r, 20));
    expect(requests).toBe(0);
  });
});
