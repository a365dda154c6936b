// Every answer the gateway itself gives (as opposed to the model's, streamed through), in one
// place: a typed error names a code; `answerFor` maps it to the status, headers and an
// OpenAI-style body. The body says what the caller can act on, never why a credential was refused
// (that reason goes to the log and the rejections metric only).

export type GatewayErrorCode =
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  | 'body_too_large'
  | 'no_ready_endpoint'
  | 'upstream_unreachable'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'shutting_down'
  | 'internal_error';

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly code: GatewayErrorCode;
  constructor(code: GatewayErrorCode, detail?: string) {
    super(detail ?? code);
    this.code = code;
  }
}

interface Answer {
  status: number;
  type: string;
  message: string;
  headers?: Record<string, string>;
}

const ANSWERS: Record<GatewayErrorCode, Answer> = {
  unauthorized: { status: 401, type: 'authentication_error', message: 'missing or invalid gateway credential' },
  not_found: { status: 404, type: 'invalid_request_error', message: 'no such model endpoint' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', message: 'use POST', headers: { allow: 'POST' } },
  body_too_large: { status: 413, type: 'invalid_request_error', message: 'request body too large', headers: { connection: 'close' } },
  no_ready_endpoint: { status: 503, type: 'service_unavailable', message: 'no replica of this model is ready; retry shortly', headers: { 'retry-after': '1' } },
  upstream_unreachable: { status: 502, type: 'server_error', message: 'no replica of this model could be reached' },
  upstream_error: { status: 502, type: 'server_error', message: 'the model failed before answering' },
  upstream_timeout: { status: 504, type: 'server_error', message: 'the model did not answer in time' },
  shutting_down: { status: 503, type: 'service_unavailable', message: 'the gateway is shutting down; retry', headers: { 'retry-after': '1', connection: 'close' } },
  internal_error: { status: 500, type: 'server_error', message: 'internal error in the gateway' },
};

export function statusOf(code: GatewayErrorCode): number {
  return ANSWERS[code].status;
}

/** Status, headers and JSON body of the gateway's answer for `code`. */
export function answerFor(code: GatewayErrorCode): { status: number; headers: Record<string, string>; body: string } {
  const a = ANSWERS[code];
  const body = JSON.stringify({ error: { code, type: a.type, message: a.message, param: null } });
  return {
    status: a.status,
    headers: { ...a.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    body,
  };
}
