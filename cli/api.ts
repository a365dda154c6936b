// The tenant API client of the CLI: one method per route, every request with a deadline, the
// key only ever in the Authorization header. Errors become CliError with the API's own message
// on one line and the exit code of its outcome. fetch is injected.
// Every string the server sends (documents, error messages) is made printable here, before any
// of it is rendered or printed: no control character of a pod's message (an ESC, a C1 CSI)
// reaches the terminal (schema/text.ts).
import type { z } from 'zod';
import { printable, printableDeep } from '../schema/text.ts';
import type { AutoscaleFlag } from './args.ts';
import { EXIT, exitForApiError, type ExitCode } from './exit-codes.ts';
import { admissionPage, admissionView, errorEnvelope, queueView, quotaView, type AdmissionPage, type AdmissionView, type QueueView, type QuotaView } from './model.ts';

export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** The API's error code (e.g. quota_exceeded), when the API answered with one. */
  readonly code: string | undefined;
  constructor(exitCode: ExitCode, message: string, code?: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = code;
  }
}

export interface ApiOptions {
  url: string;
  key: string;
  requestTimeoutMs: number;
  fetch?: typeof fetch;
}

export interface Api {
  /** `created`: made by this call (201 admitted, 202 queued); false: a replay of the same key (200). `queued`: 202, waiting for quota. */
  submit(body: unknown, idempotencyKey: string): Promise<{ created: boolean; queued: boolean; admission: AdmissionView }>;
  get(id: string): Promise<AdmissionView>;
  list(opts: { limit?: number; cursor?: string }): Promise<AdmissionPage>;
  /** PATCH of the replicas and/or the autoscaling (null: off): `changed` false when the API changed nothing (already there, or a replay). */
  scale(id: string, change: ScaleChange, idempotencyKey: string): Promise<{ changed: boolean; admission: AdmissionView }>;
  remove(id: string): Promise<AdmissionView>;
  quota(): Promise<QuotaView>;
  /** GET /queue: the tenant's queued admissions. */
  queue(): Promise<QueueView>;
}

/** The body of PATCH /requests/{id}: what is absent stays as it is. */
export interface ScaleChange {
  replicas?: number;
  autoscale?: AutoscaleFlag | null;
}

/** Collapses whitespace so a message is always one line, without control characters. */
export const oneLine = (s: string): string => printable(s).replace(/\s+/g, ' ').trim();

export function createApi(opts: ApiOptions): Api {
  const doFetch = opts.fetch ?? fetch;
  const base = opts.url.replace(/\/+$/, '');

  async function call<S extends z.ZodType>(schema: S, method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; data: z.output<S> }> {
    const headers: Record<string, string> = { Accept: 'application/json', Authorization: `Bearer ${opts.key}`, ...init.headers };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(opts.requestTimeoutMs),
        redirect: 'error',
      });
      text = await res.text();
    } catch (err) {
      const e = err as Error;
      const why = e.name === 'TimeoutError' ? `no answer within ${opts.requestTimeoutMs} ms` : oneLine(causeOf(e));
      throw new CliError(EXIT.unavailable, `cannot reach the API at ${base}: ${why}`);
    }
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const env = errorEnvelope.safeParse(json);
      if (env.success) throw new CliError(exitForApiError(res.status, env.data.error.code), oneLine(env.data.error.message), env.data.error.code);
      throw new CliError(exitForApiError(res.status, ''), `${method} ${path}: HTTP ${res.status} ${oneLine(res.statusText)}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new CliError(EXIT.error, `unexpected response from ${method} ${path} (HTTP ${res.status}); is ${base} a ModelDock API?`);
    return { status: res.status, data: printableDeep(parsed.data) };
  }

  const idPath = (id: string) => `/requests/${encodeURIComponent(id)}`;
  return {
    async submit(body, idempotencyKey) {
      const r = await call(admissionView, 'POST', '/requests', { body, headers: { 'Idempotency-Key': idempotencyKey } });
      return { created: r.status === 201 || r.status === 202, queued: r.status === 202, admission: r.data };
    },
    get: async (id) => (await call(admissionView, 'GET', idPath(id))).data,
    async list({ limit, cursor }) {
      const q = new URLSearchParams();
      if (limit !== undefined) q.set('limit', String(limit));
      if (cursor) q.set('cursor', cursor);
      const qs = q.size ? `?${q}` : '';
      return (await call(admissionPage, 'GET', `/requests${qs}`)).data;
    },
    async scale(id, change, idempotencyKey) {
      const body: ScaleChange = {};
      if (change.replicas !== undefined) body.replicas = change.replicas;
      if (change.autoscale !== undefined) body.autoscale = change.autoscale;
      const r = await call(admissionView, 'PATCH', idPath(id), { body, headers: { 'Idempotency-Key': idempotencyKey } });
      return { changed: r.status === 202, admission: r.data };
    },
    remove: async (id) => (await call(admissionView, 'DELETE', idPath(id))).data,
    quota: async () => (await call(quotaView, 'GET', '/quota')).data,
    queue: async () => (await call(queueView, 'GET', '/queue')).data,
  };
}

/** The reason a fetch failed, in a word when Node has one (ECONNREFUSED), else the message. */
export function causeOf(e: Error): string {
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof Error) return (cause as { code?: string }).code ?? cause.message;
  return e.message;
}
