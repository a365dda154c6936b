// Forwards one inference request to the in-cluster gateway and returns its answer as a stream.
// The caller has already checked the API key, the rate limit and that the admission is the
// caller's and ready; here a short-lived credential naming tenant and admission is signed
// (schema/gateway-credential.ts) and sent in place of the tenant's key, which never leaves the
// edge. The body goes byte for byte; the answer comes back unbuffered (new Response(upstream.body)),
// with only the headers of upstream.ts's PASSED_HEADERS. Failures are thrown typed
// (GatewayFailure, ApiError) and rendered by the one error mapping (errors.ts).
import { claimsFor, CREDENTIAL_HEADER, signCredential } from '../../schema/gateway-credential.ts';
import { modelUnavailable } from '../errors.ts';
import type { GatewayConfig } from '../gateway-config.ts';
import type { Logger } from '../middleware/log.ts';
import { headersDeadline, type HeadersDeadline } from './deadline.ts';
import { GatewayFailure } from './gateway-failure.ts';
import { busyRetryAfter, passedHeaders, verdictOf } from './upstream.ts';

/** The fetch the gateway is called with (the runtime's; a fake gateway in unit tests). */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** The two OpenAI-compatible operations, as the gateway's paths name them. */
export type InferenceOperation = 'chat/completions' | 'completions';

export interface ForwardDeps {
  fetch: Fetch;
  gateway: GatewayConfig;
  now: () => Date;
  log: Logger;
}

export interface InferenceCall {
  tenant: string;
  admission: string;
  requestId: string;
  operation: InferenceOperation;
  body: ArrayBuffer;
  contentType: string;
  accept: string | undefined;
  /** The tenant's request signal: its client leaving aborts the call, the stream included. */
  signal: AbortSignal;
}

export async function forward(deps: ForwardDeps, call: InferenceCall): Promise<Response> {
  const credential = await signCredential(deps.gateway.key, claimsFor({ tenant: call.tenant, admission: call.admission, requestId: call.requestId, nowMs: deps.now().getTime() }));
  const headers = new Headers({ 'content-type': call.contentType, 'x-request-id': call.requestId, [CREDENTIAL_HEADER]: credential });
  if (call.accept) headers.set('accept', call.accept);
  const deadline = headersDeadline(call.signal, deps.gateway.headersTimeoutMs);
  try {
    const upstream = await deps
      .fetch(`${deps.gateway.url}/v1/${call.operation}`, { method: 'POST', headers, body: call.body, signal: deadline.signal, redirect: 'manual' })
      .catch((err: unknown) => {
        throw failureOf(err, call.signal, deadline);
      });
    return await answer(deps, call, upstream, deadline);
  } finally {
    deadline.disarm();
  }
}

async function answer(deps: ForwardDeps, call: InferenceCall, upstream: Response, deadline: HeadersDeadline): Promise<Response> {
  const verdict = verdictOf(upstream.status, upstream.headers);
  if (verdict.kind === 'refused') {
    await upstream.body?.cancel().catch(() => undefined); // the body is the gateway's error text: nothing to pass on
    deps.log({ level: 'error', msg: 'gateway refused the request', reqId: call.requestId, tenant: call.tenant, admissionId: call.admission, status: upstream.status, keyId: deps.gateway.key.id, why: verdict.why });
    throw new GatewayFailure('refused', verdict.why);
  }
  if (verdict.kind === 'read') {
    // Small and of a declared length: read under the headers deadline.
    const body = await upstream.text().catch((err: unknown) => {
      throw failureOf(err, call.signal, deadline);
    });
    const retryAfter = busyRetryAfter(body, upstream.headers.get('retry-after'));
    if (retryAfter !== undefined) throw modelUnavailable(retryAfter);
    return new Response(body, { status: upstream.status, headers: passedHeaders(upstream.headers) });
  }
  return new Response(upstream.body, { status: upstream.status, headers: passedHeaders(upstream.headers) });
}

/** Why the gateway gave no answer: the client left, the deadline passed, or it could not be reached. */
function failureOf(err: unknown, client: AbortSignal, deadline: HeadersDeadline): GatewayFailure {
  if (client.aborted) return new GatewayFailure('client_closed', 'the client closed the request before the gateway answered', { cause: err });
  if (deadline.timedOut) return new GatewayFailure('timeout', (deadline.signal.reason as Error | undefined)?.message ?? 'gateway headers deadline', { cause: err });
  return new GatewayFailure('unreachable', `gateway unreachable: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, { cause: err });
}
