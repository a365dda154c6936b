// Polls a condition until it holds. Nothing is swallowed:
//  - a 5xx ends the wait at once (an answer the probe records with poll.answer, or a thrown
//    HTTP error), unless the test expects 5xx answers while it waits (`allow5xx`);
//  - a thrown error ends the wait at once unless it means "not yet": a 404 (an object that does
//    not exist yet), a plain `Error` a probe throws to say what is still missing, or what
//    `tolerate` names; another 4xx, a transport failure, a database error or a bug (TypeError)
//    is never "not yet";
//  - a timeout reports the last outcome (value or error) and the last HTTP answer recorded,
//    status and body — never just "last: false".
import { ApiException } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, KubeApiError } from '../../controller/runtime/errors.ts';

/** An HTTP answer a condition was read from. */
export interface HttpAnswer {
  status: number;
  body: unknown;
}

/** An answer a caller cannot read (e.g. not JSON), as an error that keeps its status and body. */
export class HttpAnswerError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(what: string, status: number, body: string) {
    super(`${what}: HTTP ${status} ${shorten(body)}`);
    this.name = 'HttpAnswerError';
    this.status = status;
    this.body = body;
  }
}

export interface Poll {
  /** Records an answer the condition reads (returned as is): a 5xx ends the wait unless allow5xx; a timeout reports the last one. */
  answer<A extends HttpAnswer>(a: A, label?: string): A;
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /**
   * The test expects 5xx answers while it waits (an outage; a readiness probe that answers 503
   * until ready): true, or just the statuses it expects (e.g. [503]: a 500 still ends the wait).
   */
  allow5xx?: boolean | readonly number[];
  /** Further errors that mean "not yet" (e.g. connection refused while a server restarts). */
  tolerate?: (err: unknown) => boolean;
}

export function shorten(body: unknown, max = 600): string {
  const s = typeof body === 'string' ? body : JSON.stringify(body);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The HTTP status an error carries: the API server's, the kube client's, or an HttpAnswerError's. */
export function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof KubeApiError || err instanceof ApiException) return err.code;
  if (err instanceof HttpAnswerError) return err.status;
  return undefined;
}

/** A 404 of any of the kube clients (an object not there yet). */
export const isNotFoundError = (err: unknown): boolean => httpStatusOf(err) === 404;

const expected5xx = (status: number, opts: WaitOptions): boolean =>
  opts.allow5xx === true || (Array.isArray(opts.allow5xx) && opts.allow5xx.includes(status));

function notYet(err: unknown, opts: WaitOptions): boolean {
  const status = httpStatusOf(err);
  if (status !== undefined && status >= 500) return expected5xx(status, opts);
  if (opts.tolerate?.(err)) return true;
  if (status !== undefined) return status === 404;
  return err instanceof Error && Object.getPrototypeOf(err) === Error.prototype && !('code' in err);
}

class Refused5xx extends Error {}

export async function waitFor<T>(what: string, probe: (poll: Poll) => Promise<T | undefined | false>, opts: WaitOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastAnswer: string | undefined;
  const poll: Poll = {
    answer(a, label) {
      lastAnswer = `${label ? `${label}: ` : ''}HTTP ${a.status} ${shorten(a.body)}`;
      if (a.status >= 500 && !expected5xx(a.status, opts)) throw new Refused5xx(`${what}: ${lastAnswer} (a 5xx ends a wait unless the test expects one: allow5xx)`);
      return a;
    },
  };
  let last: string;
  for (let rounds = 1; ; rounds++) {
    try {
      const v = await probe(poll);
      if (v !== undefined && v !== false) return v;
      last = JSON.stringify(v) ?? 'undefined';
    } catch (err) {
      if (err instanceof Refused5xx) throw err;
      if (!notYet(err, opts)) throw new Error(`${what}: ${errorMessage(err)} (round ${rounds}; not a "not yet" error, so the wait ends)`, { cause: err });
      last = `error: ${errorMessage(err)}`;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms (${rounds} rounds) waiting for ${what}; last: ${last}${lastAnswer ? `; last answer: ${lastAnswer}` : ''}`);
    }
    await sleep(opts.intervalMs ?? 200);
  }
}
