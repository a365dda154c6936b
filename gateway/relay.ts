// Streams a pod's answer to the client as it arrives: status and a few headers at once, then
// every chunk as soon as it is read (never collected), with the client's pace as backpressure.
// Ends in exactly one of four ways; whichever way, the request to the pod is over when it does.
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { SseMeter } from './sse-meter.ts';

export type RelayEnd = 'completed' | 'client_closed' | 'timeout' | 'upstream_error';

/** The pod's headers the client gets; nothing else of the pod's passes. */
const PASSED_HEADERS = ['content-type', 'cache-control', 'retry-after'] as const;

export interface RelayOptions {
  upstreamReq: ClientRequest;
  upstreamRes: IncomingMessage;
  res: ServerResponse;
  /** Headers of the gateway's own (x-request-id). */
  headers: Record<string, string>;
  /** Fed every chunk of an event stream. */
  meter: SseMeter;
  /** Longest wait for the pod's next chunk (a client too slow to take one does not count). */
  idleTimeoutMs: number;
  /** The client left (→ client_closed) or the total deadline passed (→ timeout). */
  clientGone: AbortSignal;
  deadline: AbortSignal;
}

export function relay(o: RelayOptions): Promise<RelayEnd> {
  const { upstreamReq, upstreamRes, res } = o;
  const headers: Record<string, string> = { ...o.headers };
  for (const name of PASSED_HEADERS) {
    const value = upstreamRes.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const streaming = (headers['content-type'] ?? '').startsWith('text/event-stream');
  // A proxy in front (an ingress) must not collect the stream either.
  if (streaming) headers['x-accel-buffering'] = 'no';
  res.writeHead(upstreamRes.statusCode ?? 502, headers);
  res.flushHeaders();

  return new Promise<RelayEnd>((resolve) => {
    let idle: NodeJS.Timeout | undefined;
    let ended = false;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => end('timeout'), o.idleTimeoutMs);
    };
    const onClientGone = () => end('client_closed');
    const onDeadline = () => end('timeout');
    function end(how: RelayEnd): void {
      if (ended) return;
      ended = true;
      clearTimeout(idle);
      o.clientGone.removeEventListener('abort', onClientGone);
      o.deadline.removeEventListener('abort', onDeadline);
      if (how === 'completed') res.end();
      else {
        // Over for the pod at once: it frees the model's slot when its connection closes.
        upstreamReq.destroy();
        // A timeout ends the client's response; a pod that broke off breaks the client's off
        // too (an incomplete chunked body, not a clean end that would look complete).
        if (how === 'timeout') res.end();
        else if (how === 'upstream_error') res.destroy();
      }
      resolve(how);
    }

    upstreamRes.on('data', (chunk: Buffer) => {
      if (ended) return;
      if (streaming) o.meter.push(chunk);
      if (res.write(chunk)) return armIdle();
      clearTimeout(idle); // the client is slow, not the pod
      upstreamRes.pause();
      res.once('drain', () => {
        if (ended) return;
        upstreamRes.resume();
        armIdle();
      });
    });
    upstreamRes.on('end', () => end('completed'));
    upstreamRes.on('close', () => {
      if (!upstreamRes.complete) end('upstream_error');
    });
    upstreamRes.on('error', () => end('upstream_error'));
    if (o.clientGone.aborted) return end('client_closed');
    if (o.deadline.aborted) return end('timeout');
    o.clientGone.addEventListener('abort', onClientGone, { once: true });
    o.deadline.addEventListener('abort', onDeadline, { once: true });
    armIdle();
  });
}
