// One attempt to send a request to one pod: resolves when the pod's status line and headers
// arrived, or with why not. Whether the pod may have seen the request decides what the caller
// may do next: a connect error (refused, unreachable, connect deadline, or a kept-alive socket the
// pod had already closed) means it did not, so another pod may be tried; anything later may not.
import { request, type Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Endpoint } from './routes.ts';

export interface AttemptOptions {
  agent: Agent;
  endpoint: Endpoint;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  connectTimeoutMs: number;
  /** From sending to the pod's headers: a request queued at the model gets them when a slot takes it. */
  headersTimeoutMs: number;
  /** The client left or the request's total deadline passed. */
  signal: AbortSignal;
}

export type AttemptResult =
  | { kind: 'response'; req: ClientRequest; res: IncomingMessage }
  | { kind: 'connect_error'; err: Error }
  | { kind: 'error'; err: Error }
  | { kind: 'headers_timeout' }
  | { kind: 'aborted' };

export function attempt(o: AttemptOptions): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let connected = false;
    let settled = false;
    let connectTimer: NodeJS.Timeout | undefined;
    const req = request(
      { host: o.endpoint.address, port: o.endpoint.port, method: 'POST', path: o.path, headers: o.headers, agent: o.agent },
      (res) => settle({ kind: 'response', req, res }),
    );
    const headersTimer = setTimeout(() => settle({ kind: 'headers_timeout' }), o.headersTimeoutMs);
    const onAbort = () => settle({ kind: 'aborted' });
    function settle(result: AttemptResult): void {
      if (settled) return;
      settled = true;
      clearTimeout(headersTimer);
      clearTimeout(connectTimer);
      o.signal.removeEventListener('abort', onAbort);
      // Anything but a response ends the request now: the pod frees whatever it holds for it.
      if (result.kind !== 'response') req.destroy();
      resolve(result);
    }

    req.on('socket', (socket) => {
      if (!socket.connecting) {
        connected = true; // a kept-alive socket
        return;
      }
      connectTimer = setTimeout(() => settle({ kind: 'connect_error', err: new Error(`connect timed out after ${o.connectTimeoutMs} ms`) }), o.connectTimeoutMs);
      socket.once('connect', () => {
        connected = true;
        clearTimeout(connectTimer);
      });
    });
    // Stays attached after the response: a socket error mid-stream is the response's to report.
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && err.code === 'ECONNRESET';
      settle(!connected || stale ? { kind: 'connect_error', err } : { kind: 'error', err });
    });
    if (o.signal.aborted) return settle({ kind: 'aborted' });
    o.signal.addEventListener('abort', onAbort, { once: true });
    req.end(o.body);
  });
}
