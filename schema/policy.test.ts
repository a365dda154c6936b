import { describe, expect, it } from 'vitest';
import { forbiddenEnvName } from './env-policy.ts';
import { imageLocation, imageRefusal, parseRegistryList, PolicyError } from './policy.ts';

describe('image registries', () => {
  it.each([
    ['nginx', 'docker.io', 'library/nginx'],
    ['nginx:1.27', 'docker.io', 'library/nginx'],
    ['acme/llm:1', 'docker.io', 'acme/llm'],
    ['ghcr.io/acme/llm:1.0', 'ghcr.io', 'acme/llm'],
    ['registry.local:5000/llm@sha256:' + 'a'.repeat(64), 'registry.local:5000', 'llm'],
    ['localhost/llm:dev', 'localhost', 'llm'],
    ['GHCR.io/acme/llm', 'ghcr.io', 'acme/llm'],
  ])('%s is %s / %s', (image, host, path) => {
    expect(imageLocation(image)).toEqual({ host, path });
  });

  it('allows any image without rules', () => {
    expect(imageRefusal('ghcr.io/x/miner:1', [])).toBeUndefined();
  });

  it('matches the host exactly and the path prefix on component boundaries', () => {
    const rules = parseRegistryList(' ghcr.io/acme , registry.local:5000 ,docker.io/library');
    expect(imageRefusal('ghcr.io/acme/llm:1', rules)).toBeUndefined();
    expect(imageRefusal('ghcr.io/acme', rules)).toBeUndefined();
    expect(imageRefusal('ghcr.io/acme-evil/llm:1', rules)).toMatch(/registry ghcr.io/);
    expect(imageRefusal('ghcr.io.evil.com/acme/llm:1', rules)).toMatch(/registry ghcr.io.evil.com/);
    expect(imageRefusal('registry.local:5000/any/thing:2', rules)).toBeUndefined();
    expect(imageRefusal('registry.local:5001/any:2', rules)).toMatch(/registry registry.local:5001/);
    expect(imageRefusal('nginx:1', rules)).toBeUndefined();
    expect(imageRefusal('someone/nginx:1', rules)).toMatch(/registry docker.io/);
  });

  it('refuses a malformed list as a whole', () => {
    expect(() => parseRegistryList('ghcr.io, https://evil')).toThrow(PolicyError);
    expect(parseRegistryList('')).toEqual([]);
    expect(parseRegistryList(undefined)).toEqual([]);
  });
});

describe('environment policy', () => {
  it.each(['NVIDIA_VISIBLE_DEVICES', 'NVIDIA_DRIVER_CAPABILITIES', 'NVIDIA_REQUIRE_CUDA', 'NVIDIA_REQUIRE_ARCH', 'CUDA_VISIBLE_DEVICES', 'Nvidia_Visible_Devices'])('refuses %s', (name) => {
    expect(forbiddenEnvName(name)).toMatch(/may not be set/);
  });
  it.each(['MODEL', 'CUDA_HOME', 'NV_THING', 'HF_HOME'])('allows %s', (name) => {
    expect(forbiddenEnvName(name)).toBeUndefined();
  });
});
