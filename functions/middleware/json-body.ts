// Body guards for JSON endpoints, run before any parsing: 413 over `maxBytes` (Content-Length
// is trusted only without Transfer-Encoding; otherwise the body is counted while read), and
// 415 unless Content-Type is application/json (the validator would silently see {}), and 400
// for ambiguous JSON (duplicate or prototype keys, unambiguous-json.ts).
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.ts';
import { unambiguousJson } from './unambiguous-json.ts';

export interface JsonBodyOptions {
  maxBytes: number;
}

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

export function jsonBody({ maxBytes }: JsonBodyOptions): MiddlewareHandler[] {
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
    unambiguousJson(),
  ];
}
