// ALLOWED_IMAGE_REGISTRIES in the Worker's configuration: a list or an explicit `*`; empty or
// absent is a misconfiguration (every request answers the fixed 500, the reason is logged once).
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ANY_REGISTRY, allowsAnyRegistry, imageRefusal, parseRegistryList } from '../schema/policy.ts';
import { ConfigError, parseConfig } from './config.ts';
import { MISCONFIGURED_MESSAGE } from './errors.ts';
import worker, { type ExecutionContext } from './worker.ts';

const URL_VAR = { DATABASE_URL: 'http://u:p@127.0.0.1:9' };
const ctx: ExecutionContext = { waitUntil: () => undefined, passThroughOnException: () => undefined, props: {} };

describe('ALLOWED_IMAGE_REGISTRIES', () => {
  it.each([
    ['absent', {}],
    ['empty', { ALLOWED_IMAGE_REGISTRIES: '' }],
    ['blank', { ALLOWED_IMAGE_REGISTRIES: ' , ' }],
  ])('%s: the configuration is invalid, naming the variable and the way to allow any registry', (_what, vars) => {
    expect(() => parseConfig({ ...URL_VAR, ...vars })).toThrow(ConfigError);
    expect(() => parseConfig({ ...URL_VAR, ...vars })).toThrow(/^invalid Worker configuration: ALLOWED_IMAGE_REGISTRIES is empty: .* or \* for any registry$/);
  });

  it('* admits any registry, explicitly', () => {
    const { policy } = parseConfig({ ...URL_VAR, ALLOWED_IMAGE_REGISTRIES: '*' });
    expect(policy.allowedRegistries).toEqual(ANY_REGISTRY);
    expect(allowsAnyRegistry(policy.allowedRegistries)).toBe(true);
  });

  it('a list admits only its registries, read as the container runtime reads an image', () => {
    const { policy } = parseConfig({ ...URL_VAR, ALLOWED_IMAGE_REGISTRIES: 'docker.io' });
    expect(policy.allowedRegistries).toEqual([{ host: 'docker.io', pathPrefix: '' }]);
    expect(imageRefusal('modeldock/mock-model:0.1.0', policy.allowedRegistries)).toBeUndefined();
    for (const image of ['Evil/model:1', 'Registry/team/model:1', 'LOCALHOST/model:1']) expect(imageRefusal(image, policy.allowedRegistries)).toMatch(/is not allowed/);
  });

  it('a malformed list is invalid as a whole', () => {
    expect(() => parseConfig({ ...URL_VAR, ALLOWED_IMAGE_REGISTRIES: 'ghcr.io, *' })).toThrow(/stands alone/);
    expect(() => parseConfig({ ...URL_VAR, ALLOWED_IMAGE_REGISTRIES: 'https://ghcr.io' })).toThrow(/is not host\[:port\]\[\/path\]/);
  });

  it('the Worker without a list answers every request with the fixed 500 misconfigured and logs why', async () => {
    // A key document and rate limits that pass: with a list, the same request is a 401.
    const base = { ...URL_VAR, ADMISSION_KEYS_JSON: JSON.stringify({ acme: `sha256:${'a'.repeat(64)}` }), RATE_LIMITS: 'off' };
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      for (const vars of [{}, { ALLOWED_IMAGE_REGISTRIES: '' }]) {
        const res = await worker.fetch(new Request('http://worker.test/quota'), { ...base, ...vars }, ctx);
        expect(res.status).toBe(500);
        expect(await res.json()).toEqual({ error: { code: 'misconfigured', message: MISCONFIGURED_MESSAGE } });
      }
      expect(errors.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/ALLOWED_IMAGE_REGISTRIES is empty/);
    } finally {
      errors.mockRestore();
    }
    const warns = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect((await worker.fetch(new Request('http://worker.test/quota'), { ...base, ALLOWED_IMAGE_REGISTRIES: 'docker.io' }, ctx)).status).toBe(401);
      expect((await worker.fetch(new Request('http://worker.test/quota'), { ...base, ALLOWED_IMAGE_REGISTRIES: '*' }, ctx)).status).toBe(401);
      expect(warns.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/ALLOWED_IMAGE_REGISTRIES is \*: images from ANY registry are admitted/);
    } finally {
      warns.mockRestore();
    }
  });

  it('wrangler.toml sets a list (not empty, not *)', () => {
    const toml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');
    const value = /^ALLOWED_IMAGE_REGISTRIES = "([^"]*)"$/m.exec(toml.slice(toml.indexOf('\n[vars]')))?.[1];
    const rules = parseRegistryList(value);
    expect(allowsAnyRegistry(rules)).toBe(false);
    expect(imageRefusal('modeldock/mock-model:0.1.0', rules)).toBeUndefined();
  });
});
