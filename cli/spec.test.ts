import { describe, expect, it } from 'vitest';
import { UsageError, type SpecFlags } from './args.ts';
import { parseSpecFile, specBody } from './spec.ts';

const none: SpecFlags = { env: [], args: [] };

describe('parseSpecFile', () => {
  it('reads YAML and JSON', () => {
    expect(parseSpecFile('name: chat\nimage: img:1\nreplicas: 2\nresources:\n  cpu: 500m\n', 'a.yaml')).toEqual({ name: 'chat', image: 'img:1', replicas: 2, resources: { cpu: '500m' } });
    expect(parseSpecFile('{"name":"chat","image":"img:1"}', 'a.json')).toEqual({ name: 'chat', image: 'img:1' });
  });
  it.each([
    ['name: [unclosed', /a.yaml: not valid YAML or JSON/],
    ['- a\n- b\n', /must hold one object/],
    ['', /must hold one object/],
    ['a: &x 1\nb: *x\n', /not valid YAML or JSON/],
  ])('%j is refused', (text, msg) => expect(() => parseSpecFile(text, 'a.yaml')).toThrow(msg));
  it('throws UsageError', () => expect(() => parseSpecFile('[', 'x')).toThrow(UsageError));
});

describe('specBody', () => {
  it('flags only: replicas defaults to 1, resources only when given', () => {
    expect(specBody({}, { ...none, name: 'chat', image: 'img:1' })).toEqual({ name: 'chat', image: 'img:1', replicas: 1 });
    expect(specBody({}, { ...none, name: 'c', image: 'i', cpu: '1', gpu: '1' })).toMatchObject({ resources: { cpu: '1', 'nvidia.com/gpu': '1' } });
  });
  it('flags override the file, env merges by name, unknown file fields go to the API as they are', () => {
    const file = { name: 'from-file', image: 'img:1', replicas: 3, resources: { cpu: '2', memory: '4Gi' }, env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], extra: true };
    expect(specBody(file, { ...none, replicas: 1, memory: '1Gi', env: ['B=20', 'C=3'] })).toEqual({
      name: 'from-file',
      image: 'img:1',
      replicas: 1,
      resources: { cpu: '2', memory: '1Gi' },
      env: [{ name: 'A', value: '1' }, { name: 'B', value: '20' }, { name: 'C', value: '3' }],
      extra: true,
    });
  });
  it('a malformed resources value in the file is left for the API to name', () => {
    expect(specBody({ name: 'a', image: 'i', resources: 'lots' }, none)).toMatchObject({ resources: 'lots' });
  });
});
