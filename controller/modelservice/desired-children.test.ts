import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { modelServiceSpecSchema, REPLICA_RESOURCES, RESOURCE_UNITS, totalAmounts } from '../../schema/model-service.ts';
import { childLabels, desiredDeployment, desiredService, endpointOf, invalidName, isControlledBy, pullPolicyFor, selectorString } from './desired.ts';
import { ms } from './desired-fixtures.ts';

describe('childLabels', () => {
  it.each([
    ['admission-id and tenant from the CR', { 'modeldock.io/admission-id': '01ABC', 'modeldock.io/tenant': 'acme' }, { 'modeldock.io/admission-id': '01ABC', 'modeldock.io/tenant': 'acme' }],
    ['a hand-made CR: admission-id = its name, no tenant', {}, { 'modeldock.io/admission-id': 'md-01abc' }],
    ['unrelated CR labels are not copied', { team: 'x' }, { 'modeldock.io/admission-id': 'md-01abc' }],
    ['the installation (INSTANCE) is copied', { 'modeldock.io/instance': 'e2e-1' }, { 'modeldock.io/admission-id': 'md-01abc', 'modeldock.io/instance': 'e2e-1' }],
    ['an installation that is no label value is not', { 'modeldock.io/instance': '-x' }, { 'modeldock.io/admission-id': 'md-01abc' }],
  ])('%s', (_n, labels, expected) => {
    expect(childLabels(ms(labels))).toEqual({
      'app.kubernetes.io/managed-by': 'modeldock',
      'modeldock.io/model-service': 'md-01abc',
      ...expected,
    });
  });
});

describe('invalidName', () => {
  it.each([
    ['md-01abc', undefined],
    ['1abc', 'DNS-1035'],
    ['a'.repeat(64), 'DNS-1035'],
  ])('%s', (name, expected) => {
    const r = invalidName(name);
    if (expected) expect(r).toContain(expected);
    else expect(r).toBeUndefined();
  });
});

describe('desiredDeployment', () => {
  const m = ms({ 'modeldock.io/tenant': 'acme' }, { resources: { cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '1' }, env: [{ name: 'A', value: '1' }, { name: 'EMPTY', value: '' }], args: ['--x'], port: 9000, readinessPath: '/ready' });
  // Built inside each test, never at collection time: a mutant is only active while a test runs.
  const build = () => {
    const d = desiredDeployment(m, m.spec);
    const pod = d.spec!.template!.spec!;
    return { d, pod, c: pod.containers[0]! };
  };

  it('never runs a pod beyond the replicas: a rollout replaces pods one at a time instead of surging past the charge and the quota', () => {
    expect(build().d.spec?.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } });
  });

  it('is owned by the ModelService (controller, blockOwnerDeletion)', () => {
    const { d } = build();
    expect(d.metadata.ownerReferences).toEqual([{ apiVersion: 'modeldock.io/v1alpha1', kind: 'ModelService', name: 'md-01abc', uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
    expect(isControlledBy(d, m)).toBe(true);
    expect(isControlledBy(d, { metadata: { ...m.metadata, uid: 'other' } })).toBe(false);
  });
  it('labels the object and the pod template; selects by managed-by + model-service only', () => {
    const { d } = build();
    expect(d.metadata.labels).toEqual(d.spec!.template!.metadata!.labels);
    expect(d.metadata.labels?.['modeldock.io/tenant']).toBe('acme');
    expect(d.spec!.selector!.matchLabels).toEqual({ 'app.kubernetes.io/managed-by': 'modeldock', 'modeldock.io/model-service': 'md-01abc' });
    expect(selectorString(m)).toBe('app.kubernetes.io/managed-by=modeldock,modeldock.io/model-service=md-01abc');
  });
  it('maps the spec: replicas, image, port, env, args, requests = limits, readiness probe', () => {
    const { d, c } = build();
    expect(d.spec!.replicas).toBe(2);
    expect(c.image).toBe('example.invalid/m:1');
    expect(c.ports).toEqual([{ name: 'http', containerPort: 9000, protocol: 'TCP' }]);
    expect(c.env).toEqual([{ name: 'A', value: '1' }, { name: 'EMPTY' }]); // a GPU container: no GPU isolation env
    expect(c.args).toEqual(['--x']);
    const perReplica = { cpu: '500m', memory: '1024Mi', 'nvidia.com/gpu': '1', 'ephemeral-storage': '1Gi' };
    expect(c.resources).toEqual({ requests: perReplica, limits: perReplica });
    expect(c.readinessProbe).toEqual({ httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 });
    expect(c.name).toBe('model');
  });
  it('runs restricted: numeric non-root user, no privilege escalation, all capabilities dropped, RuntimeDefault seccomp, read-only root', () => {
    const { pod, c } = build();
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });
  it('mounts a size-limited emptyDir at /tmp (the only writable path)', () => {
    const { pod, c } = build();
    expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } }]);
    expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
  });
  it('no ServiceAccount token and no service links in tenant pods', () => {
    const { pod } = build();
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.enableServiceLinks).toBe(false);
  });
  it.each([
    ['example.invalid/m:1', 'Always'],
    ['example.invalid/m', 'Always'],
    ['registry:5000/team/m:latest', 'Always'],
    [`example.invalid/m@sha256:${'a'.repeat(64)}`, 'IfNotPresent'],
    [`example.invalid/m:1@sha256:${'0'.repeat(64)}`, 'IfNotPresent'],
  ])('image %s → imagePullPolicy %s', (image, policy) => {
    expect(pullPolicyFor(image)).toBe(policy);
    const x = ms({}, { image });
    expect(desiredDeployment(x, x.spec).spec!.template!.spec!.containers[0]!.imagePullPolicy).toBe(policy);
  });
  it('omits what the API server would omit (empty args/env)', () => {
    const bare = ms();
    const bc = desiredDeployment(bare, bare.spec).spec!.template!.spec!.containers[0]!;
    expect(bc).not.toHaveProperty('args');
    expect(bc.env).toEqual([{ name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' }, { name: 'AMD_VISIBLE_DEVICES' }]);
    const perReplica = { cpu: '100m', memory: '128Mi', 'ephemeral-storage': '1Gi' };
    expect(bc.resources).toEqual({ requests: perReplica, limits: perReplica });
  });
  it.each([
    { name: 'no GPU request', gpu: undefined, env: [{ name: 'A', value: '1' }, { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' }, { name: 'AMD_VISIBLE_DEVICES' }] },
    { name: 'a GPU request of 0 is no GPU', gpu: '0', env: [{ name: 'A', value: '1' }, { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' }, { name: 'AMD_VISIBLE_DEVICES' }] },
    { name: 'a GPU request: the device plugin decides', gpu: '2', env: [{ name: 'A', value: '1' }] },
  ])('GPU isolation, $name: the container env overrides an image ENV such as NVIDIA_VISIBLE_DEVICES=all', ({ gpu, env }) => {
    const resources = gpu === undefined ? { cpu: '1', memory: '1Gi' } : { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': gpu };
    const m = ms({}, { resources, env: [{ name: 'A', value: '1' }] });
    expect(desiredDeployment(m, m.spec).spec!.template!.spec!.containers[0]!.env).toEqual(env);
  });

  // Property: for every valid spec, the pods ask for exactly what the ledger charges —
  // Σ over the replicas of the container's requests (= its limits) equals the charged amounts.
  const quantity = (units: string[], max: number) =>
    fc.tuple(fc.integer({ min: 1, max }), fc.constantFrom(...units), fc.boolean()).map(([n, u, frac]) => (frac ? `${n}.5${u}` : `${n}${u}`));
  it('charges exactly what every pod requests and is limited to (property)', () => {
    fc.assert(
      fc.property(
        quantity(['m', '', 'k', 'u'], 4000).filter((q) => !q.endsWith('k') || q.length < 5),
        quantity(['Mi', 'Gi', 'M', 'G', 'Ki', ''], 900),
        fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
        fc.integer({ min: 0, max: 16 }),
        (cpu, memory, gpu, replicas) => {
          const parsed = modelServiceSpecSchema.safeParse({
            image: 'example.invalid/m:1',
            replicas,
            resources: gpu === undefined ? { cpu, memory } : { cpu, memory, 'nvidia.com/gpu': String(gpu) },
          });
          fc.pre(parsed.success);
          const spec = parsed.data!;
          const container = desiredDeployment(ms({}, spec), spec).spec!.template!.spec!.containers[0]!;
          const { requests, limits } = container.resources as { requests: Record<string, string>; limits: Record<string, string> };
          expect(limits).toEqual(requests);
          const charged = totalAmounts(spec);
          for (const r of REPLICA_RESOURCES) {
            const perPod = requests[r] === undefined ? 0 : RESOURCE_UNITS[r].parse(requests[r]);
            expect(perPod * replicas).toBe(charged[r]);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('desiredService', () => {
  it('is a ClusterIP on spec.port → targetPort spec.port, selecting the pods', () => {
    const m = ms({}, { port: 8080 });
    const s = desiredService(m, m.spec);
    expect(s.spec).toEqual({
      type: 'ClusterIP',
      selector: { 'app.kubernetes.io/managed-by': 'modeldock', 'modeldock.io/model-service': 'md-01abc' },
      ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }],
    });
    expect(isControlledBy(s, m)).toBe(true);
    expect(endpointOf(m, m.spec)).toBe('http://md-01abc.lab.svc:8080');
  });
});

// Cases that pin what the mutation run (npm run mutation, docs/mutation.md) found unpinned.
describe('desired children: names, labels, owner and probe in full', () => {
  it.each([
    ['a', undefined],
    ['a1-b2', undefined],
    ['a'.repeat(63), undefined],
    ['abc-', 'DNS-1035'],
    ['-abc', 'DNS-1035'],
    ['aBc', 'DNS-1035'],
    ['a_b', 'DNS-1035'],
    ['a.b', 'DNS-1035'],
    ['', 'DNS-1035'],
  ])('invalidName(%j)', (name, expected) => {
    const r = invalidName(name);
    if (expected) expect(r).toBe(`name "${name}" must be a DNS-1035 label (≤ 63 chars, lower-case letters, digits, "-", starting with a letter) to name its Service`);
    else expect(r).toBeUndefined();
  });
  it.each([
    ['acme', 'acme'],
    ['Team_1.x', 'Team_1.x'],
    ['a'.repeat(63), 'a'.repeat(63)],
    ['a'.repeat(64), undefined],
    ['bad value', undefined],
    ['-acme', undefined],
    ['acme-', undefined],
    ['', undefined],
  ])('a tenant label %j is copied only when it is a valid label value', (tenant, want) => {
    expect(childLabels(ms({ 'modeldock.io/tenant': tenant }))['modeldock.io/tenant']).toBe(want);
  });
  it('Deployment and Service carry the identity of the ModelService', () => {
    const m = ms({ 'modeldock.io/admission-id': '01ABC' });
    const d = desiredDeployment(m, m.spec);
    const s = desiredService(m, m.spec);
    expect([d.apiVersion, d.kind, s.apiVersion, s.kind]).toEqual(['apps/v1', 'Deployment', 'v1', 'Service']);
    for (const o of [d, s]) {
      expect(o.metadata).toEqual({
        name: 'md-01abc',
        namespace: 'lab',
        labels: { 'app.kubernetes.io/managed-by': 'modeldock', 'modeldock.io/model-service': 'md-01abc', 'modeldock.io/admission-id': '01ABC' },
        ownerReferences: [{ apiVersion: 'modeldock.io/v1alpha1', kind: 'ModelService', name: 'md-01abc', uid: 'uid-1', controller: true, blockOwnerDeletion: true }],
      });
    }
    expect(d.spec!.template!.spec!.containers[0]!.name).toBe('model');
  });
  it('an owner without a UID yet gives an empty uid; only a controller reference with the UID controls', () => {
    const noUid = { metadata: { name: 'x', namespace: 'lab' } };
    expect(desiredService({ ...ms(), metadata: noUid.metadata }, ms().spec).metadata.ownerReferences?.[0]?.uid).toBe('');
    const child = (refs: Array<{ controller?: boolean; uid: string }>) => ({ metadata: { name: 'c', ownerReferences: refs.map((r) => ({ apiVersion: 'v', kind: 'K', name: 'n', ...r })) } });
    expect(isControlledBy(child([{ uid: 'uid-1' }]), ms())).toBe(false);
    expect(isControlledBy(child([{ uid: 'uid-1', controller: false }]), ms())).toBe(false);
    expect(isControlledBy(child([{ uid: 'other', controller: true }, { uid: 'uid-1', controller: true }]), ms())).toBe(true);
    expect(isControlledBy({ metadata: { name: 'c' } }, ms())).toBe(false);
  });
  it('the readiness probe in full', () => {
    const m = ms({}, { readinessPath: '/ready' });
    expect(desiredDeployment(m, m.spec).spec!.template!.spec!.containers[0]!.readinessProbe).toEqual({
      httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });
  it('GPUs are requested (and limited) only when asked for; quantities are canonical', () => {
    const m = ms({}, { resources: { cpu: '1.5', memory: '1G' } });
    const perReplica = { cpu: '1500m', memory: '954Mi', 'ephemeral-storage': '1Gi' };
    expect(desiredDeployment(m, m.spec).spec!.template!.spec!.containers[0]!.resources).toEqual({ requests: perReplica, limits: perReplica });
  });
});
