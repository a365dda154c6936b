import { describe, expect, it } from 'vitest';
import { forbiddenEnvName } from './env-policy.ts';
import { allowsAnyRegistry, ANY_REGISTRY, imageLocation, imageRefusal, parseRegistryList, PolicyError } from './policy.ts';

describe('image registries', () => {
  it.each([
    ['nginx', 'docker.io', 'library/nginx'],
    ['nginx:1.27', 'docker.io', 'library/nginx'],
    ['acme/llm:1', 'docker.io', 'acme/llm'],
    ['index.docker.io/acme/llm:1', 'docker.io', 'acme/llm'],
    ['ghcr.io/acme/llm:1.0', 'ghcr.io', 'acme/llm'],
    ['registry.local:5000/llm@sha256:' + 'a'.repeat(64), 'registry.local:5000', 'llm'],
    ['localhost/llm:dev', 'localhost', 'llm'],
    // A first component with a capital letter is a registry host, as the runtime reads it; case kept.
    ['GHCR.io/acme/llm', 'GHCR.io', 'acme/llm'],
    ['Evil/model:1', 'Evil', 'model'],
    ['Registry/team/model:1', 'Registry', 'team/model'],
    ['LOCALHOST/model:1', 'LOCALHOST', 'model'],
  ])('%s is %s / %s', (image, host, path) => {
    expect(imageLocation(image)).toEqual({ ok: true, host, path });
  });

  it.each(['Evil/model:1', 'Registry/team/model:1', 'LOCALHOST/model:1'])('refuses %s under docker.io: it is pulled from another host', (image) => {
    const refusal = imageRefusal(image, parseRegistryList('docker.io'));
    expect(refusal).toMatch(new RegExp(`^registry ${image.split('/')[0]} \\(.*\\) is not allowed; the container runtime reads a first component with a capital letter as a registry host; allowed: docker.io$`));
  });

  it('refuses a registry written in another case than the allowed one', () => {
    expect(imageRefusal('GHCR.io/acme/llm:1', parseRegistryList('ghcr.io/acme'))).toMatch(/^registry GHCR\.io /);
    expect(imageRefusal('ghcr.io/acme/llm:1', parseRegistryList('GHCR.io/acme'))).toBeUndefined();
  });

  it('refuses a reference the runtime would read differently, under any rules', () => {
    expect(imageRefusal('a_b.c/model:1', ANY_REGISTRY)).toMatch(/^not an image reference the container runtime reads as written: the registry part "a_b\.c"/);
    expect(imageRefusal('Evil/Model:1', ANY_REGISTRY)).toMatch(/must be lowercase/);
  });

  it('* allows any registry, explicitly', () => {
    expect(parseRegistryList(' * ')).toEqual(ANY_REGISTRY);
    expect(allowsAnyRegistry(parseRegistryList('*'))).toBe(true);
    expect(allowsAnyRegistry(parseRegistryList('docker.io'))).toBe(false);
    for (const image of ['ghcr.io/x/miner:1', 'Evil/model:1', 'nginx']) expect(imageRefusal(image, parseRegistryList('*'))).toBeUndefined();
  });

  it('no rules allow nothing', () => {
    expect(imageRefusal('nginx:1', [])).toBe('registry docker.io (docker.io/library/nginx) is not allowed; allowed: none');
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

  it('index.docker.io in the list is Docker Hub, as in an image', () => {
    expect(parseRegistryList('index.docker.io/modeldock')).toEqual([{ host: 'docker.io', pathPrefix: 'modeldock' }]);
    expect(imageRefusal('modeldock/mock-model:0.1.0', parseRegistryList('index.docker.io/modeldock'))).toBeUndefined();
  });

  it('refuses a malformed list as a whole', () => {
    expect(() => parseRegistryList('ghcr.io, https://evil')).toThrow(PolicyError);
    expect(() => parseRegistryList('ghcr.io, *')).toThrow(/\* \(any registry\) stands alone/);
  });

  it.each([undefined, '', '  ', ' , ,'])('refuses an empty list (%j): no registry would mean any, so it must be said', (text) => {
    expect(() => parseRegistryList(text)).toThrow(PolicyError);
    expect(() => parseRegistryList(text)).toThrow(/ALLOWED_IMAGE_REGISTRIES is empty: .* or \* for any registry/);
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
