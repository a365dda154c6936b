// The decisions on the gateway's answer, as a table: which answers are the gateway speaking for
// itself (translated) and which are the model's (passed on as they are).
import { describe, expect, it } from 'vitest';
import { busyRetryAfter, GATEWAY_ERROR_MAX_BYTES, passedHeaders, verdictOf } from './upstream.ts';

const h = (o: Record<string, string>) => new Headers(o);
const JSON_503 = { 'content-type': 'application/json', 'content-length': '120' };

describe('verdictOf', () => {
  it.each([
    [200, { 'content-type': 'text/event-stream' }, 'pass'],
    [400, { 'content-type': 'application/json' }, 'pass'],
    [404, { 'content-type': 'application/json', 'content-length': '90' }, 'pass'],
    [429, { 'content-type': 'application/json', 'content-length': '90' }, 'pass'],
    [502, { 'content-type': 'application/json', 'content-length': '90' }, 'pass'],
    [504, { 'content-type': 'application/json', 'content-length': '90' }, 'pass'],
    [401, {}, 'refused'],
    [401, { 'content-type': 'application/json', 'content-length': '90' }, 'refused'],
    [301, { location: '/x' }, 'refused'],
    [307, { location: '/x' }, 'refused'],
    [503, JSON_503, 'read'],
    [503, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(GATEWAY_ERROR_MAX_BYTES) }, 'read'],
    [503, { 'content-type': 'application/json', 'content-length': String(GATEWAY_ERROR_MAX_BYTES + 1) }, 'pass'],
    [503, { 'content-type': 'application/json' }, 'pass'], // no declared length: streamed, never read here
    [503, { 'content-type': 'text/plain', 'content-length': '5' }, 'pass'],
  ])('%i %j → %s', (status, headers, kind) => {
    expect(verdictOf(status, h(headers)).kind).toBe(kind);
  });
});

describe('busyRetryAfter', () => {
  const body = (code: unknown) => JSON.stringify({ error: { code, type: 'service_unavailable', message: 'm', param: null } });
  it.each([
    [body('no_ready_endpoint'), '1', 1],
    [body('no_ready_endpoint'), '12', 12],
    [body('no_ready_endpoint'), null, 1],
    [body('no_ready_endpoint'), '0', 1],
    [body('no_ready_endpoint'), 'Wed, 21 Oct 2026 07:28:00 GMT', 1],
    [body('shutting_down'), '1', 1],
    [body('overloaded'), '5', undefined],
    [body(503), '5', undefined],
    ['{"error":null}', '5', undefined],
    ['null', '5', undefined],
    ['not json', '5', undefined],
  ])('%s, Retry-After %s → %s', (text, retryAfter, seconds) => {
    expect(busyRetryAfter(text, retryAfter)).toBe(seconds);
  });
});

describe('passedHeaders', () => {
  it('keeps only content-type, cache-control, retry-after and x-request-id', () => {
    const out = passedHeaders(
      h({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'retry-after': '2', 'x-request-id': 'r', 'set-cookie': 'a=b', server: 'gw', 'x-upstream-pod': '10.0.0.1', 'content-length': '9' }),
    );
    expect(Object.fromEntries(out)).toEqual({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'retry-after': '2', 'x-request-id': 'r' });
  });
});
