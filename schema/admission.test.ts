import { describe, expect, it } from 'vitest';
import {
  ACTIVE_STATES,
  admissionId,
  admissionRequestSchema,
  crNameFor,
  DEFAULT_MAX_REPLICAS,
  idempotencyKey,
  RELEASING_STATES,
  RESERVATION_STATES,
  tenantName,
  TERMINAL_STATES,
  QUEUED_STATES,
  RECONCILED_STATES,
  NEVER_CHARGED_STATES,
  MAX_QUEUE_TTL_SECONDS,
  toAdmission,
  type AdmissionPolicy,
  type ParsedAdmission,
} from './admission.ts';
import { ANY_REGISTRY, parseRegistryList } from './policy.ts';

const testPolicy = (over: Partial<AdmissionPolicy> = {}): AdmissionPolicy => ({
  defaults: {},
  min: { cpu: 10, memory: 16 },
  max: { cpu: 16_000, memory: 65_536 },
  allowedRegistries: ANY_REGISTRY,
  ...over,
});
function admissionOf(body: unknown, policy = testPolicy()): ParsedAdmission {
  const d = toAdmission(admissionRequestSchema().parse(body), policy);
  if (!d.ok) throw new Error(JSON.stringify(d.issues));
  return d.admission;
}
import { canonicalJson } from './canonical-json.ts';

const base = { name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 2, resources: { cpu: '1500m', memory: '1Gi', 'nvidia.com/gpu': '1' } };

describe('admissionRequestSchema', () => {
  it('applies the spec defaults and yields TOTAL amounts in ledger units', () => {
    const parsed = admissionOf(base);
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
    expect(parsed.amounts).toEqual({ cpu: 3000, memory: 2048, 'nvidia.com/gpu': 2, modelservices: 1 });
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
    ['NVIDIA_VISIBLE_DEVICES', { ...base, env: [{ name: 'NVIDIA_VISIBLE_DEVICES', value: 'all' }] }, 'NVIDIA_VISIBLE_DEVICES may not be set'],
    ['NVIDIA_DRIVER_CAPABILITIES', { ...base, env: [{ name: 'NVIDIA_DRIVER_CAPABILITIES', value: 'all' }] }, 'NVIDIA_DRIVER_CAPABILITIES may not be set'],
    ['NVIDIA_REQUIRE_CUDA', { ...base, env: [{ name: 'NVIDIA_REQUIRE_CUDA', value: 'cuda>=12' }] }, 'NVIDIA_REQUIRE_CUDA may not be set'],
    ['nvidia_visible_devices in lower case', { ...base, env: [{ name: 'nvidia_visible_devices', value: 'all' }] }, 'may not be set'],
    ['CUDA_VISIBLE_DEVICES', { ...base, env: [{ name: 'CUDA_VISIBLE_DEVICES', value: '0,1' }] }, 'CUDA_VISIBLE_DEVICES may not be set'],
    ['AMD_VISIBLE_DEVICES', { ...base, env: [{ name: 'AMD_VISIBLE_DEVICES', value: 'all' }] }, 'AMD_VISIBLE_DEVICES may not be set'],
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

describe('admissionRequestSchema documentation (the OpenAPI document tenants read)', () => {
  it('describes the request, its name and the configured replica bound', () => {
    const schema = admissionRequestSchema(5);
    expect(schema.description).toBe('A request to run a model image. The tenant is taken from the API key, never from the body.');
    expect(schema.shape.name.description).toBe('Name of the model service (DNS-1123 label), chosen by the tenant.');
    expect(schema.shape.replicas.description).toBe('Desired number of pods (0..5).');
  });
});

describe('the admission policy', () => {
  const noResources = { name: 'free', image: 'ghcr.io/x/miner:1', replicas: 16 };
  const decide = (body: unknown, over: Parameters<typeof testPolicy>[0] = {}) => toAdmission(admissionRequestSchema().parse(body), testPolicy(over));

  it('refuses a request without cpu and memory when no defaults are configured, naming both fields', () => {
    const d = decide(noResources);
    expect(d.ok).toBe(false);
    expect(d.ok ? [] : d.issues.map((i) => i.path)).toEqual(['resources.cpu', 'resources.memory']);
    expect(JSON.stringify(d)).toContain('DEFAULT_CPU');
  });

  it('charges the configured defaults and writes them into the spec', () => {
    const d = decide(noResources, { defaults: { cpu: '250m', memory: '256Mi' } });
    expect(d.ok && d.admission.spec.resources).toEqual({ cpu: '250m', memory: '256Mi' });
    expect(d.ok && d.admission.amounts).toEqual({ cpu: 4000, memory: 4096, 'nvidia.com/gpu': 0, modelservices: 1 });
    const partial = decide({ ...noResources, resources: { cpu: '1' } }, { defaults: { cpu: '250m', memory: '256Mi' } });
    expect(partial.ok && partial.admission.spec.resources).toEqual({ cpu: '1', memory: '256Mi' });
  });

  it('charges one modelservices even at zero replicas', () => {
    expect(admissionOf({ ...base, replicas: 0 }).amounts).toEqual({ cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 });
  });

  it.each([
    ['cpu below the minimum', { cpu: '5m', memory: '1Gi' }, 'resources.cpu', 'at least 10m'],
    ['memory below the minimum', { cpu: '1', memory: '8Mi' }, 'resources.memory', 'at least 16Mi'],
    ['cpu above the maximum', { cpu: '17', memory: '1Gi' }, 'resources.cpu', 'at most 16000m'],
    ['memory above the maximum', { cpu: '1', memory: '65Gi' }, 'resources.memory', 'at most 65536Mi'],
    ['zero cpu', { cpu: '0', memory: '1Gi' }, 'resources.cpu', 'at least 10m'],
  ])('refuses %s per replica', (_what, resources, path, message) => {
    const d = decide({ ...base, resources });
    expect(d.ok).toBe(false);
    expect(d.ok ? undefined : d.issues).toEqual([{ path, message: expect.stringContaining(message) }]);
  });

  it('refuses an image outside the allowed registries, naming the registry', () => {
    const allowedRegistries = parseRegistryList('registry.acme.io, ghcr.io/acme');
    expect(decide({ ...base, image: 'ghcr.io/acme/llm:1' }, { allowedRegistries }).ok).toBe(true);
    expect(decide({ ...base, image: 'registry.acme.io/team/llm:1' }, { allowedRegistries }).ok).toBe(true);
    const d = decide({ ...base, image: 'ghcr.io/x/miner:1' }, { allowedRegistries });
    expect(d.ok ? undefined : d.issues).toEqual([{ path: 'image', message: expect.stringContaining('registry ghcr.io') }]);
  });

  it.each(['Evil/model:1', 'Registry/team/model:1', 'LOCALHOST/model:1'])('refuses %s under docker.io: the runtime pulls it from another host', (image) => {
    const d = decide({ ...base, image }, { allowedRegistries: parseRegistryList('docker.io') });
    expect(d.ok ? undefined : d.issues).toEqual([{ path: 'image', message: expect.stringMatching(new RegExp(`^registry ${image.split('/')[0]} .* is not allowed`)) }]);
    expect(decide({ ...base, image: 'modeldock/mock-model:0.1.0' }, { allowedRegistries: parseRegistryList('docker.io') }).ok).toBe(true);
  });

  it.each(['a_b.c/model:1', 'reg:123456/model', 'Evil/Model:1'])('the request schema refuses %s: the runtime would read it differently or refuse it', (image) => {
    const r = admissionRequestSchema().safeParse({ ...base, image });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['image', expect.stringContaining('as the container runtime reads it: ')]]);
  });
});

describe('request hash input', () => {
  it('is canonical: key order and explicit defaults do not matter', () => {
    const a = admissionOf(base);
    const b = admissionOf({ resources: base.resources, replicas: 2, port: 8000, image: base.image, name: 'llm', env: [] });
    expect(a.hashInput).toBe(b.hashInput);
    const c = admissionOf({ ...base, replicas: 3 });
    expect(c.hashInput).not.toBe(a.hashInput);
  });

  it('covers the request as sent, not the operator defaults (a retry after a defaults change replays)', () => {
    const body = { name: 'llm', image: 'ghcr.io/acme/llm:1.0', replicas: 1 };
    const before = admissionOf(body, testPolicy({ defaults: { cpu: '100m', memory: '128Mi' } }));
    const after = admissionOf(body, testPolicy({ defaults: { cpu: '200m', memory: '256Mi' } }));
    expect(after.hashInput).toBe(before.hashInput);
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
  it('the state machine: queued, active, releasing and terminal states partition the states', () => {
    expect(RESERVATION_STATES).toEqual(['queued', 'admitted', 'delivered', 'ready', 'deleting', 'releasing', 'released', 'conflict', 'cancelled', 'expired']);
    expect(QUEUED_STATES).toEqual(['queued']);
    expect(ACTIVE_STATES).toEqual(['admitted', 'delivered', 'ready']);
    expect(RELEASING_STATES).toEqual(['deleting', 'releasing']);
    expect(TERMINAL_STATES).toEqual(['released', 'conflict', 'cancelled', 'expired']);
    expect([...QUEUED_STATES, ...ACTIVE_STATES, ...RELEASING_STATES, ...TERMINAL_STATES].sort()).toEqual([...RESERVATION_STATES].sort());
    expect(RECONCILED_STATES).toEqual(['admitted', 'delivered', 'ready', 'deleting', 'releasing']);
    expect(NEVER_CHARGED_STATES).toEqual(['queued', 'cancelled', 'expired']);
  });
  it('queueing is opt-in, its TTL only with it, and the choice is part of the request hash', () => {
    const refuse = admissionRequestSchema().parse(base);
    expect(refuse.onShortQuota).toBe('refuse');
    expect(admissionRequestSchema().safeParse({ ...base, queueTtlSeconds: 60 }).success).toBe(false);
    expect(admissionRequestSchema().safeParse({ ...base, onShortQuota: 'queue', queueTtlSeconds: 0 }).success).toBe(false);
    expect(admissionRequestSchema().safeParse({ ...base, onShortQuota: 'queue', queueTtlSeconds: MAX_QUEUE_TTL_SECONDS + 1 }).success).toBe(false);
    expect(admissionRequestSchema().safeParse({ ...base, onShortQuota: 'wait' }).success).toBe(false);
    const queued = admissionRequestSchema().parse({ ...base, onShortQuota: 'queue', queueTtlSeconds: 60 });
    const a = toAdmission(refuse, testPolicy());
    const b = toAdmission(queued, testPolicy());
    if (!a.ok || !b.ok) throw new Error('expected both admitted by the policy');
    expect(a.admission.queue).toBeNull();
    expect(b.admission.queue).toEqual({ ttlSeconds: 60 });
    expect(b.admission.hashInput).not.toBe(a.admission.hashInput);
    expect(a.admission.hashInput).not.toContain('queue');
  });
  it('allows 16 replicas by default', () => {
    expect(DEFAULT_MAX_REPLICAS).toBe(16);
    expect(admissionRequestSchema().safeParse({ ...base, replicas: 16 }).success).toBe(true);
  });
});
