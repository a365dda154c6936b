import { describe, expect, it } from 'vitest';
import {
  amountsPerReplica,
  conditionSchema,
  dns1123Label,
  endpointFor,
  envVarSchema,
  imageReference,
  modelServiceSpecSchema,
  modelServiceStatusSchema,
  RESOURCE_UNITS,
  resourcesSchema,
  totalAmounts,
} from './model-service.ts';

const ok = (schema: { safeParse(v: unknown): { success: boolean } }, v: unknown) => schema.safeParse(v).success;
/** The messages of a failed parse, joined (empty when it passed). */
const messages = (schema: { safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ message: string; path: PropertyKey[] }> } } }, v: unknown) =>
  (schema.safeParse(v).error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');

describe('dns1123Label', () => {
  it.each([
    ['a', true],
    ['llm-7b', true],
    ['0a', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['', false],
    ['-a', false],
    ['a-', false],
    ['A', false],
    ['a_b', false],
    ['a.b', false],
    ['a b', false],
    ['xa-\n', false],
  ])('%j → %s', (v, want) => expect(ok(dns1123Label, v)).toBe(want));
  it('says what a DNS-1123 label is', () => {
    expect(messages(dns1123Label, 'A')).toContain('must be a DNS-1123 label');
  });
});

describe('imageReference', () => {
  it.each([
    'model',
    'ghcr.io/org/model:1.2',
    'registry.local:5000/model@sha256:' + 'a'.repeat(64),
    'registry.local:5000/team/model:v1@sha256:' + '0'.repeat(64),
    'localhost/a__b/c-d/e.f:latest',
    'my-registry.example.com/a/b/c',
    'a--b',
    'x/y:' + 'T'.repeat(128),
  ])('accepts %s', (v) => expect(ok(imageReference, v)).toBe(true));
  it.each([
    '',
    'Model',
    'not an image',
    'ghcr.io/org/model:',
    'model@sha256:abc',
    'model@sha256:' + 'A'.repeat(64),
    '-registry/model',
    'registry-/model',
    'model:-tag',
    'x/y:' + 'T'.repeat(129),
    'a/' + 'b'.repeat(511),
    'a_',
    '_a',
    'a..b',
    'reg:123456/model',
    ' model',
    'model ',
    'model:1\n',
  ])('refuses %j', (v) => expect(ok(imageReference, v)).toBe(false));
  it('names the expected form', () => {
    expect(messages(imageReference, 'not an image')).toContain('must be an OCI image reference');
  });
});

describe('resourcesSchema', () => {
  it('takes Kubernetes quantities; a malformed one says so and names the resource', () => {
    expect(resourcesSchema.parse({ cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '2' })).toEqual({ cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '2' });
    expect(messages(resourcesSchema, { cpu: 'lots', memory: '1Gi' })).toBe('cpu: cpu must be a Kubernetes quantity, e.g. 500m, 2, 4Gi');
    expect(messages(resourcesSchema, { cpu: '1', memory: '1Q' })).toBe('memory: memory must be a Kubernetes quantity, e.g. 500m, 2, 4Gi');
  });
  it('requires cpu and memory: nothing runs for free', () => {
    expect(ok(resourcesSchema, { cpu: '1', memory: '1Gi' })).toBe(true);
    expect(ok(resourcesSchema, { cpu: '1' })).toBe(false);
    expect(ok(resourcesSchema, { memory: '1Gi' })).toBe(false);
    expect(ok(resourcesSchema, {})).toBe(false);
  });
  it('a well-formed quantity the ledger cannot charge carries the parser message (and only that)', () => {
    const one = { cpu: '1', memory: '1Gi' };
    expect(messages(resourcesSchema, { ...one, 'nvidia.com/gpu': '0.5' })).toBe('nvidia.com/gpu: "0.5" must be a whole number');
    expect(messages(resourcesSchema, { ...one, cpu: '-1' })).toBe('cpu: "-1" is negative');
    expect(messages(resourcesSchema, { ...one, memory: '100Ei' })).toBe('memory: "100Ei" is larger than the maximum allowed');
  });
  it('refuses unknown resources', () => {
    expect(ok(resourcesSchema, { cpu: '1', memory: '1Gi', 'amd.com/gpu': '1' })).toBe(false);
  });
});

describe('envVarSchema', () => {
  it.each([
    [{ name: 'A', value: '' }, true],
    [{ name: '_a.b-c9', value: 'x' }, true],
    [{ name: '-x', value: 'x' }, true],
    [{ name: 'a'.repeat(256), value: 'x' }, true],
    [{ name: 'a'.repeat(257), value: 'x' }, false],
    [{ name: '', value: 'x' }, false],
    [{ name: '9A', value: 'x' }, false],
    [{ name: 'A B', value: 'x' }, false],
    [{ name: 'A=B', value: 'x' }, false],
    [{ name: 'A\n', value: 'x' }, false],
    [{ name: 'A', value: 'v'.repeat(32_768) }, true],
    [{ name: 'A', value: 'v'.repeat(32_769) }, false],
    [{ name: 'A' }, false],
    [{ name: 'A', value: 'x', extra: 1 }, false],
  ])('%j → %s', (v, want) => expect(ok(envVarSchema, v)).toBe(want));
  it('says what a valid name is', () => {
    expect(messages(envVarSchema, { name: '9A', value: '' })).toBe('name: must be a valid environment variable name');
  });
});

describe('modelServiceSpecSchema', () => {
  const base = { image: 'x/y:1', replicas: 1, resources: { cpu: '1', memory: '1Gi' } };
  it('applies the defaults', () => {
    expect(modelServiceSpecSchema.parse(base)).toEqual({ image: 'x/y:1', replicas: 1, port: 8000, resources: { cpu: '1', memory: '1Gi' }, env: [], args: [], readinessPath: '/healthz' });
  });
  it.each([
    [{ replicas: 0 }, true],
    [{ replicas: -1 }, false],
    [{ replicas: 1.5 }, false],
    [{ port: 1 }, true],
    [{ port: 65535 }, true],
    [{ port: 0 }, false],
    [{ port: 65536 }, false],
    [{ port: 80.5 }, false],
    [{ env: Array.from({ length: 64 }, (_, i) => ({ name: `E${i}`, value: '' })) }, true],
    [{ env: Array.from({ length: 65 }, (_, i) => ({ name: `E${i}`, value: '' })) }, false],
    [{ args: Array.from({ length: 64 }, () => 'a') }, true],
    [{ args: Array.from({ length: 65 }, () => 'a') }, false],
    [{ args: ['a'.repeat(4096)] }, true],
    [{ args: ['a'.repeat(4097)] }, false],
    [{ readinessPath: '/' }, true],
    [{ readinessPath: '/ready?x=1' }, true],
    [{ readinessPath: '/' + 'a'.repeat(255) }, true],
    [{ readinessPath: '/' + 'a'.repeat(256) }, false],
    [{ readinessPath: 'ready' }, false],
    [{ readinessPath: '/a b' }, false],
    [{ readinessPath: '/a\n' }, false],
    [{ unknown: 1 }, false],
    [{ resources: {} }, false],
    [{ env: [{ name: 'NVIDIA_VISIBLE_DEVICES', value: 'all' }] }, false],
  ])('%j → %s', (over, want) => expect(ok(modelServiceSpecSchema, { ...base, ...over })).toBe(want));
  it('environment variable names must be unique', () => {
    const env = [
      { name: 'A', value: '1' },
      { name: 'A', value: '2' },
    ];
    expect(messages(modelServiceSpecSchema, { ...base, env })).toBe('env: environment variable names must be unique');
    expect(ok(modelServiceSpecSchema, { ...base, env: [env[0], { name: 'B', value: '2' }] })).toBe(true);
  });
  it('says what a readiness path is', () => {
    expect(messages(modelServiceSpecSchema, { ...base, readinessPath: 'x' })).toBe('readinessPath: must be an absolute HTTP path without spaces');
  });
});

describe('amounts', () => {
  it('per replica, in ledger units; a missing resource is 0', () => {
    expect(amountsPerReplica({ cpu: '1500m', memory: '1Gi', 'nvidia.com/gpu': '1' })).toEqual({ cpu: 1500, memory: 1024, 'nvidia.com/gpu': 1 });
    expect(amountsPerReplica({})).toEqual({ cpu: 0, memory: 0, 'nvidia.com/gpu': 0 });
    expect(amountsPerReplica({ memory: '512Mi' })).toEqual({ cpu: 0, memory: 512, 'nvidia.com/gpu': 0 });
  });
  it('total = per replica × replicas, plus one modelservices (0 replicas still cost the count)', () => {
    expect(totalAmounts({ resources: { cpu: '250m', memory: '3Gi', 'nvidia.com/gpu': '2' }, replicas: 3 })).toEqual({ cpu: 750, memory: 9216, 'nvidia.com/gpu': 6, modelservices: 1 });
    expect(totalAmounts({ resources: { cpu: '1', memory: '1Gi' }, replicas: 0 })).toEqual({ cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 });
  });
  it('names the ledger unit of each resource', () => {
    expect(Object.fromEntries(Object.entries(RESOURCE_UNITS).map(([r, u]) => [r, u.unit]))).toEqual({ cpu: 'millicores', memory: 'MiB', 'nvidia.com/gpu': 'count', modelservices: 'count' });
    expect(RESOURCE_UNITS.cpu.parse('1')).toBe(1000);
    expect(RESOURCE_UNITS.memory.parse('1Gi')).toBe(1024);
    expect(RESOURCE_UNITS['nvidia.com/gpu'].parse('3')).toBe(3);
  });
});

describe('status schemas', () => {
  const cond = { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'AllReplicasAvailable', message: '' };
  it('conditions are metav1.Conditions', () => {
    expect(ok(conditionSchema, cond)).toBe(true);
    expect(ok(conditionSchema, { ...cond, observedGeneration: 0 })).toBe(true);
    expect(ok(conditionSchema, { ...cond, observedGeneration: -1 })).toBe(false);
    expect(ok(conditionSchema, { ...cond, status: 'Maybe' })).toBe(false);
  });
  it('counts are non-negative integers; the phase is one of the five', () => {
    expect(ok(modelServiceStatusSchema, { phase: 'Running', replicas: 0, readyReplicas: 0, availableReplicas: 0, observedGeneration: 0, conditions: [cond] })).toBe(true);
    for (const field of ['replicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']) {
      expect(ok(modelServiceStatusSchema, { [field]: -1 }), field).toBe(false);
    }
    expect(ok(modelServiceStatusSchema, { phase: 'Done' })).toBe(false);
  });
});

describe('endpointFor', () => {
  it('is the Service URL inside the cluster', () => expect(endpointFor('md-1', 'lab', 8080)).toBe('http://md-1.lab.svc:8080'));
});
