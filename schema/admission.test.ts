import { describe, expect, it } from 'vitest';
import {
  ACTIVE_STATES,
  admissionId,
  admissionRequestSchema,
  crNameFor,
  DEFAULT_MAX_REPLICAS,
  hashInput,
  idempotencyKey,
  RELEASING_STATES,
  RESERVATION_STATES,
  tenantName,
  TERMINAL_STATES,
  toAdmission,
} from './admission.ts';
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

describe('identifiers and states', () => {
  it.each([
    ['k', true],
    ['!~', true],
    ['a'.repeat(255), true],
    ['', false],
    ['a'.repeat(256), false],
    ['a b', false],
    ['é', false],
    ['a\n', false],
  ])('Idempotency-Key %j → %s', (v, want) => expect(idempotencyKey.safeParse(v).success).toBe(want));
  it('an Idempotency-Key error says what is allowed', () => {
    expect(idempotencyKey.safeParse('a b').error?.issues[0]?.message).toBe('must be 1 to 255 printable ASCII characters without spaces');
  });
  it.each([
    ['01ARZ3NDEKTSV4RRFFQ69G5FAV', true],
    ['01ARZ3NDEKTSV4RRFFQ69G5FA', false],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAVX', false],
    ['01arz3ndektsv4rrffq69g5fav', false],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAI', false],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAL', false],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAO', false],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAU', false],
    ['x01ARZ3NDEKTSV4RRFFQ69G5FAV', false],
  ])('admission id %s → %s', (v, want) => expect(admissionId.safeParse(v).success).toBe(want));
  it('an admission id error says it must be a ULID', () => {
    expect(admissionId.safeParse('x').error?.issues[0]?.message).toBe('must be an admission id (ULID)');
  });
  it('a tenant is a DNS-1123 label (it becomes a label value)', () => {
    expect(tenantName.safeParse('acme').success).toBe(true);
    expect(tenantName.safeParse('Acme').success).toBe(false);
  });
  it('the state machine: active, releasing and terminal states partition the states', () => {
    expect(RESERVATION_STATES).toEqual(['admitted', 'delivered', 'ready', 'deleting', 'releasing', 'released', 'conflict']);
    expect(ACTIVE_STATES).toEqual(['admitted', 'delivered', 'ready']);
    expect(RELEASING_STATES).toEqual(['deleting', 'releasing']);
    expect(TERMINAL_STATES).toEqual(['released', 'conflict']);
  });
  it('allows 16 replicas by default', () => {
    expect(DEFAULT_MAX_REPLICAS).toBe(16);
    expect(admissionRequestSchema().safeParse({ ...base, replicas: 16 }).success).toBe(true);
  });
});
