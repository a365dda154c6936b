// Body guards for JSON endpoints, run before any parsing: 413 over `maxBytes` (Content-Length
// is trusted only without Transfer-Encoding; otherwise the body is counted while read), and
// 415 unless Content-Type is application/json (the validator would silently see {}), and — for
// a body the Worker reads — 400 for ambiguous JSON (duplicate or prototype keys, unambiguous-json.ts).
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.ts';
import { unambiguousJson } from './unambiguous-json.ts';

export interface JsonBodyOptions {
  maxBytes: number;
}

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

/** Size and Content-Type: the guards of every JSON body. */
function guards(maxBytes: number): MiddlewareHandler[] {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, 'payload_too_large', `the request body is larger than ${maxBytes} bytes`);
    },
  });
  return [
    limit,
    async function requireJson(c, next) {
      const type = c.req.header('Content-Type');
      if (!type || !JSON_TYPE.test(type)) {
        throw new ApiError(415, 'unsupported_media_type', 'the request body must be JSON (Content-Type: application/json)');
      }
      await next();
    },
  ];
}

export function jsonBody({ maxBytes }: JsonBodyOptions): MiddlewareHandler[] {
  return [...guards(maxBytes), unambiguousJson()];
}

/**
 * The guards of a JSON body the Worker forwards as it is (an inference request): size and
 * Content-Type, then the body is read as bytes FIRST, so `c.req.arrayBuffer()` is exactly what was
 * sent (Hono derives a later `c.req.json()` from those bytes; read as text first, the bytes would
 * be re-encoded: a byte-order mark or a stray invalid byte changed). No ambiguity check: the
 * Worker reads none of its fields, the model parses it.
 */
export function forwardedJsonBody({ maxBytes }: JsonBodyOptions): MiddlewareHandler[] {
  return [
    ...guards(maxBytes),
    async function readBytesFirst(c, next) {
      await c.req.arrayBuffer();
      await next();
    },
  ];
}
