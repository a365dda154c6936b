// The inference configuration: GATEWAY_URL and GATEWAY_CREDENTIAL_KEY both or neither, the key
// checked without ever quoting it, PUBLIC_URL an https origin, GATEWAY_HEADERS_TIMEOUT_MS bounded.
// A problem fails the whole configuration (the fixed 500 misconfigured at the Worker's entry).
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './config.ts';
import { MISCONFIGURED_MESSAGE } from './errors.ts';
import worker, { type ExecutionContext } from './worker.ts';

const BASE = { DATABASE_URL: 'http://u:p@127.0.0.1:9', ALLOWED_IMAGE_REGISTRIES: '*' };
const SECRET = 'a-secret-of-at-least-32-bytes-0123456789';
const KEY_DOC = JSON.stringify({ id: 'k1', secret: SECRET });
const ctx: ExecutionContext = { waitUntil: () => undefined, passThroughOnException: () => undefined, props: {} };

describe('GATEWAY_URL and GATEWAY_CREDENTIAL_KEY', () => {
  it('neither (or blank): inference off', () => {
    expect(parseConfig(BASE).gateway).toBeUndefined();
    expect(parseConfig({ ...BASE, GATEWAY_URL: ' ', GATEWAY_CREDENTIAL_KEY: '' }).gateway).toBeUndefined();
  });

  it('both: the URL without its trailing slash, the key, the headers deadline (120 s unless set)', () => {
    expect(parseConfig({ ...BASE, GATEWAY_URL: 'http://gw.ns.svc:8080/', GATEWAY_CREDENTIAL_KEY: KEY_DOC }).gateway).toEqual({
      url: 'http://gw.ns.svc:8080',
      key: { id: 'k1', secret: SECRET },
      headersTimeoutMs: 120_000,
    });
    expect(parseConfig({ ...BASE, GATEWAY_URL: 'https://gw.example.com/edge//', GATEWAY_CREDENTIAL_KEY: KEY_DOC, GATEWAY_HEADERS_TIMEOUT_MS: '5000' }).gateway).toMatchObject({
      url: 'https://gw.example.com/edge',
      headersTimeoutMs: 5000,
    });
  });

  it.each([
    ['only the URL', { GATEWAY_URL: 'http://gw:8080' }, /GATEWAY_CREDENTIAL_KEY is missing/],
    ['only the key', { GATEWAY_CREDENTIAL_KEY: KEY_DOC }, /GATEWAY_URL is missing/],
    ['a URL of another scheme', { GATEWAY_URL: 'ftp://gw', GATEWAY_CREDENTIAL_KEY: KEY_DOC }, /GATEWAY_URL must be an http\(s\) URL/],
    ['a URL with credentials', { GATEWAY_URL: 'http://u:p@gw', GATEWAY_CREDENTIAL_KEY: KEY_DOC }, /GATEWAY_URL must be/],
    ['a URL with a query', { GATEWAY_URL: 'http://gw/?a=1', GATEWAY_CREDENTIAL_KEY: KEY_DOC }, /GATEWAY_URL must be/],
    ['not a URL', { GATEWAY_URL: 'gateway', GATEWAY_CREDENTIAL_KEY: KEY_DOC }, /GATEWAY_URL must be/],
    ['a key that is not JSON', { GATEWAY_URL: 'http://gw', GATEWAY_CREDENTIAL_KEY: `{"id":"k1","secret":"${SECRET}"` }, /GATEWAY_CREDENTIAL_KEY is not JSON/],
    ['a short secret', { GATEWAY_URL: 'http://gw', GATEWAY_CREDENTIAL_KEY: JSON.stringify({ id: 'k1', secret: 'short-secret' }) }, /secret: a secret has at least 32 bytes/],
    ['a bad key id', { GATEWAY_URL: 'http://gw', GATEWAY_CREDENTIAL_KEY: JSON.stringify({ id: 'k 1', secret: SECRET }) }, /id: a key id is/],
    ['a headers deadline under 1 s', { GATEWAY_URL: 'http://gw', GATEWAY_CREDENTIAL_KEY: KEY_DOC, GATEWAY_HEADERS_TIMEOUT_MS: '10' }, /GATEWAY_HEADERS_TIMEOUT_MS/],
  ])('%s: invalid, and the message never quotes the key', (_what, vars, problem) => {
    let message = '';
    try {
      parseConfig({ ...BASE, ...vars });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(problem);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain('short-secret');
  });

  it('one of the two alone refuses every request with the fixed 500, the admission API included', async () => {
    const res = await worker.fetch(
      new Request('http://worker.test/quota', { headers: { Authorization: 'Bearer nobody-has-this-key-0123' } }),
      { ...BASE, RATE_LIMITS: 'off', MODELDOCK_ENV: 'development', ADMISSION_KEYS_JSON: '{}', GATEWAY_CREDENTIAL_KEY: KEY_DOC },
      ctx,
    );
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
    expect(body).not.toContain(SECRET);
  });
});

describe('PUBLIC_URL', () => {
  it('unset or blank: undefined (the request origin is used); an https origin is kept without a trailing slash', () => {
    expect(parseConfig(BASE).publicUrl).toBeUndefined();
    expect(parseConfig({ ...BASE, PUBLIC_URL: '' }).publicUrl).toBeUndefined();
    expect(parseConfig({ ...BASE, PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
    expect(parseConfig({ ...BASE, PUBLIC_URL: 'https://api.example.com:8443' }).publicUrl).toBe('https://api.example.com:8443');
  });

  it.each(['http://api.example.com', 'https://api.example.com/modeldock', 'https://api.example.com/?x=1', 'https://u:p@api.example.com', 'api.example.com'])('%s: invalid', (url) => {
    expect(() => parseConfig({ ...BASE, PUBLIC_URL: url })).toThrow(/PUBLIC_URL must be an https origin/);
  });
});
