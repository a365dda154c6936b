import { describe, expect, it } from 'vitest';
import { admissionRequestSchema, crNameFor, hashInput, toAdmission } from './admission.ts';
import { canonicalJson } from './canonical-json.ts';

const base = { name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 2, resources: { cpu: '1500m', memory: '1Gi', 'nvidia.com/gpu': '1' } };

describe('admissionRequestSchema', () => {
  it('applies the spec defaults and yields TOTAL amounts in ledger units', () => {
    const parsed = toAdmission(admissionRequestSchema().parse(base));
    expect(parsed.name).toBe('llm');
    expect(parsed.spec).toEqual({
      image: 'ghcr.io/acme/llm:1.0',
      replicas: 2,
      port: 8000,
      resources: { cpu: '1500m', memory: '1Gi', 'nvidia.com/gpu': '1' },
      env: [],
      args: [],
      readinessPath: '/healthz',
    });
    expect(parsed.amounts).toEqual({ cpu: 3000, memory: 2048, 'nvidia.com/gpu': 2 });
  });

  it.each([
    ['a tenant field', { ...base, tenant: 'globex' }, 'tenant'],
    ['an unknown field', { ...base, namespace: 'kube-system' }, 'namespace'],
    ['an upper-case name', { ...base, name: 'LLM' }, 'name'],
    ['a bad image', { ...base, image: 'not an image' }, 'image'],
    ['too many replicas', { ...base, replicas: 17 }, 'replicas'],
    ['negative replicas', { ...base, replicas: -1 }, 'replicas'],
    ['a fractional GPU', { ...base, resources: { 'nvidia.com/gpu': '0.5' } }, 'resources'],
    ['a bad quantity', { ...base, resources: { cpu: 'lots' } }, 'resources'],
    ['an unknown resource', { ...base, resources: { 'amd.com/gpu': '1' } }, 'resources'],
    ['a bad port', { ...base, port: 0 }, 'port'],
    ['a relative readiness path', { ...base, readinessPath: 'healthz' }, 'readinessPath'],
  ])('rejects %s', (_what, body, path) => {
    const r = admissionRequestSchema().safeParse(body);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(path);
  });

  it('takes the maximum replicas from configuration', () => {
    expect(admissionRequestSchema(2).safeParse({ ...base, replicas: 3 }).success).toBe(false);
    expect(admissionRequestSchema(100).safeParse({ ...base, replicas: 100 }).success).toBe(true);
  });
});

describe('request hash input', () => {
  it('is canonical: key order and explicit defaults do not matter', () => {
    const a = toAdmission(admissionRequestSchema().parse(base));
    const b = toAdmission(admissionRequestSchema().parse({ resources: base.resources, replicas: 2, port: 8000, image: base.image, name: 'llm', env: [] }));
    expect(hashInput(a)).toBe(hashInput(b));
    const c = toAdmission(admissionRequestSchema().parse({ ...base, replicas: 3 }));
    expect(hashInput(c)).not.toBe(hashInput(a));
  });

  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ f: 1, e: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"e":2,"f":1}]},"b":1}');
  });

  it('names the CR after the lower-cased id', () => {
    expect(crNameFor('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBe('md-01arz3ndektsv4rrffq69g5fav');
  });
});
