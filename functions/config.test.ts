// ALLOWED_IMAGE_REGISTRIES in the Worker's configuration: a list or an explicit `*`; empty or
// absent is a misconfiguration (every request answers the fixed 500, the reason is logged once).
import { createHash } from 'node:crypto';
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

  it('POST /requests under docker.io: Evil/model:1, Registry/team/model:1 and LOCALHOST/model:1 are a 400 naming the image and its registry', async () => {
    const key = 'config-test-key-0123456789';
    const env = {
      ...URL_VAR,
      ADMISSION_KEYS_JSON: JSON.stringify({ acme: `sha256:${createHash('sha256').update(key).digest('hex')}` }),
      RATE_LIMITS: 'off',
      ALLOWED_IMAGE_REGISTRIES: 'docker.io',
    };
    const post = async (image: string) => {
      const res = await worker.fetch(
        new Request('http://worker.test/requests', {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': `k-${image}` },
          body: JSON.stringify({ name: 'm', image, replicas: 1, resources: { cpu: '100m', memory: '128Mi' } }),
        }),
        env,
        ctx,
      );
      return { status: res.status, body: (await res.json()) as { error: { code: string; details?: { issues?: Array<{ path: string; message: string }> } } } };
    };
    for (const image of ['Evil/model:1', 'Registry/team/model:1', 'LOCALHOST/model:1']) {
      const r = await post(image);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.details?.issues).toEqual([{ path: 'image', message: expect.stringMatching(new RegExp(`^registry ${image.split('/')[0]} .* is not allowed`)) }]);
    }
    // The same request from Docker Hub passes validation (and then needs the database, absent here).
    expect((await post('modeldock/mock-model:0.1.0')).status).not.toBe(400);
  });

  it('wrangler.toml sets a list (not empty, not *)', () => {
    const toml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');
    const value = /^ALLOWED_IMAGE_REGISTRIES = "([^"]*)"$/m.exec(toml.slice(toml.indexOf('\n[vars]')))?.[1];
    const rules = parseRegistryList(value);
    expect(allowsAnyRegistry(rules)).toBe(false);
    expect(imageRefusal('modeldock/mock-model:0.1.0', rules)).toBeUndefined();
  });
});

describe('PLACEMENT_POLICY', () => {
  const base = { ...URL_VAR, ALLOWED_IMAGE_REGISTRIES: 'docker.io' };
  it('is least-loaded unless set, affinity when set so', () => {
    expect(parseConfig(base).placementPolicy.name).toBe('least-loaded');
    expect(parseConfig({ ...base, PLACEMENT_POLICY: 'affinity' }).placementPolicy.name).toBe('affinity');
  });
  it('an unknown policy refuses the configuration, naming the known ones', () => {
    expect(() => parseConfig({ ...base, PLACEMENT_POLICY: 'random' })).toThrow(/^invalid Worker configuration: PLACEMENT_POLICY: PLACEMENT_POLICY must be one of least-loaded, affinity$/);
  });
});
