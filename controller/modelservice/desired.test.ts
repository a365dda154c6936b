import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { modelServiceSpecSchema, REPLICA_RESOURCES, totalAmounts, type ModelService } from '../../schema/model-service.ts';
import { RESOURCE_UNITS } from '../../schema/model-service.ts';
import { admissionRequestSchema } from '../../schema/admission.ts';
import type { Placement, Toleration } from '../../schema/placement.ts';
import { converged, withDesiredHash } from '../runtime/apply.ts';
import {
  childLabels,
  desiredDeployment,
  desiredService,
  endpointOf,
  invalidName,
  isControlledBy,
  PLACEMENT_ANNOTATION,
  placementCleanup,
  podPlacement,
  pullPolicyFor,
  selectorString,
} from './desired.ts';
import type { Deployment } from './types.ts';

const ms = (labels: Record<string, string> = {}, spec: object = {}): ModelService => ({
  apiVersion: 'modeldock.io/v1alpha1',
  kind: 'ModelService',
  metadata: { name: 'md-01abc', namespace: 'lab', uid: 'uid-1', labels },
  spec: modelServiceSpecSchema.parse({ image: 'example.invalid/m:1', replicas: 2, resources: { cpu: '100m', memory: '128Mi' }, ...spec }),
});

describe('childLabels', () => {
  it.each([
    ['admission-id and tenant from the CR', { 'modeldock.io/admission-id': '01ABC', 'modeldock.io/tenant': 'acme' }, { 'modeldock.io/admission-id': '01ABC', 'modeldock.io/tenant': 'acme' }],
    ['a hand-made CR: admission-id = its name, no tenant', {}, { 'modeldock.io/admission-id': 'md-01abc' }],
    ['unrelated CR labels are not copied', { team: 'x' }, { 'modeldock.io/admission-id': 'md-01abc' }],
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
    expect(c.env).toEqual([{ name: 'A', value: '1' }, { name: 'EMPTY' }]);
    expect(c.args).toEqual(['--x']);
    expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '1024Mi', 'nvidia.com/gpu': '1' }, limits: { cpu: '500m', memory: '1024Mi', 'nvidia.com/gpu': '1' } });
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
    expect(bc).not.toHaveProperty('env');
    expect(bc.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '100m', memory: '128Mi' } });
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
    expect(desiredDeployment(m, m.spec).spec!.template!.spec!.containers[0]!.resources).toEqual({ requests: { cpu: '1500m', memory: '954Mi' }, limits: { cpu: '1500m', memory: '954Mi' } });
  });
});

// Placement is the operator's (controller environment), applied to the pod template; never the tenant's.
describe('placement of tenant pods', () => {
  const realNode: Toleration = { key: 'modeldock.io/real-node', operator: 'Equal', value: 'true', effect: 'NoSchedule' };
  const gpuTaint: Toleration = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };
  const zoneAffinity = {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In' as const, values: ['a', 'b'] }] }] } },
  };
  const cpuPod = () => ms();
  const gpuPod = (gpu = '2') => ms({}, { resources: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': gpu } });
  const podOf = (d: Deployment) => d.spec!.template!.spec!;
  const placementOf = (d: Deployment) => {
    const { nodeSelector, tolerations, affinity } = podOf(d);
    return { nodeSelector, tolerations, affinity };
  };

  it.each<[string, Placement]>([
    ['nothing configured', {}],
    ['empty settings', { nodeSelector: {}, tolerations: [], affinity: {}, gpu: {} }],
    ['GPU settings only, for a pod without GPUs', { gpu: { nodeSelector: { pool: 'gpu' }, tolerations: [gpuTaint] } }],
  ])('%s → no nodeSelector, tolerations or affinity field and no annotation: the Deployment is what it was', (_n, p) => {
    const m = cpuPod();
    const d = desiredDeployment(m, m.spec, p);
    expect(d).toEqual(desiredDeployment(m, m.spec));
    for (const f of ['nodeSelector', 'tolerations', 'affinity']) expect(podOf(d)).not.toHaveProperty(f);
    expect(d.metadata).not.toHaveProperty('annotations');
    // A Deployment written before placement existed (same desired object, same hash) is not rewritten.
    expect(converged(d, withDesiredHash(desiredDeployment(m, m.spec)))).toBe(true);
  });

  it.each<[string, Placement, () => ReturnType<typeof ms>, Record<string, unknown>]>([
    ['a node selector', { nodeSelector: { 'modeldock.io/real-node': 'true' } }, cpuPod, { nodeSelector: { 'modeldock.io/real-node': 'true' } }],
    ['tolerations', { tolerations: [realNode] }, cpuPod, { tolerations: [realNode] }],
    ['an affinity', { affinity: zoneAffinity }, cpuPod, { affinity: zoneAffinity }],
    [
      'all three (the local stack’s real node)',
      { nodeSelector: { 'modeldock.io/real-node': 'true' }, tolerations: [realNode], affinity: zoneAffinity },
      cpuPod,
      { nodeSelector: { 'modeldock.io/real-node': 'true' }, tolerations: [realNode], affinity: zoneAffinity },
    ],
    ['GPU settings on a GPU pod', { gpu: { nodeSelector: { pool: 'gpu' }, tolerations: [gpuTaint] } }, gpuPod, { nodeSelector: { pool: 'gpu' }, tolerations: [gpuTaint] }],
    [
      'GPU settings add to the general ones; a GPU key wins; a toleration in both appears once',
      { nodeSelector: { pool: 'cpu', team: 'ml' }, tolerations: [realNode, gpuTaint], affinity: zoneAffinity, gpu: { nodeSelector: { pool: 'gpu' }, tolerations: [gpuTaint, { ...gpuTaint, effect: 'NoExecute' }] } },
      gpuPod,
      { nodeSelector: { pool: 'gpu', team: 'ml' }, tolerations: [realNode, gpuTaint, { ...gpuTaint, effect: 'NoExecute' }], affinity: zoneAffinity },
    ],
    ['GPU settings on a CPU pod: only the general ones', { nodeSelector: { pool: 'cpu' }, gpu: { nodeSelector: { pool: 'gpu' }, tolerations: [gpuTaint] } }, cpuPod, { nodeSelector: { pool: 'cpu' } }],
    ['a pod asking for 0 GPUs requests none: no GPU settings', { gpu: { tolerations: [gpuTaint] } }, () => gpuPod('0'), {}],
  ])('%s → exactly that in the pod template, recorded in the placement annotation', (_n, p, make, want) => {
    const m = make();
    const d = desiredDeployment(m, m.spec, p);
    expect(placementOf(d)).toEqual({ nodeSelector: undefined, tolerations: undefined, affinity: undefined, ...want });
    expect(podPlacement(p, m.spec.resources['nvidia.com/gpu'] !== undefined && m.spec.resources['nvidia.com/gpu'] !== '0')).toEqual(want);
    if (Object.keys(want).length) expect(JSON.parse(d.metadata.annotations![PLACEMENT_ANNOTATION]!)).toEqual(want);
    else expect(d.metadata).not.toHaveProperty('annotations');
    // Nothing else in the pod template moves.
    const { nodeSelector: _n1, tolerations: _t1, affinity: _a1, ...rest } = podOf(d);
    expect(rest).toEqual(podOf(desiredDeployment(m, m.spec)));
  });

  it('an empty label selector in an affinity term stays: it selects every pod (an absent one selects none)', () => {
    const m = cpuPod();
    const spread = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: {}, namespaceSelector: {} } }] } };
    expect(podOf(desiredDeployment(m, m.spec, { affinity: spread })).affinity).toEqual(spread);
  });

  it('the annotation is canonical JSON: the same placement in another key order is the same Deployment', () => {
    const m = cpuPod();
    const a = desiredDeployment(m, m.spec, { nodeSelector: { b: '2', a: '1' }, tolerations: [{ value: 'v', key: 'k' } as Toleration] });
    const b = desiredDeployment(m, m.spec, { nodeSelector: { a: '1', b: '2' }, tolerations: [{ key: 'k', value: 'v' }] });
    expect(a.metadata.annotations).toEqual({ [PLACEMENT_ANNOTATION]: '{"nodeSelector":{"a":"1","b":"2"},"tolerations":[{"key":"k","value":"v"}]}' });
    expect(b.metadata.annotations).toEqual(a.metadata.annotations);
  });

  it('an unchanged setting writes nothing; a changed one (added, changed or removed) makes the Deployment differ', () => {
    const m = cpuPod();
    const before: Placement = { nodeSelector: { 'modeldock.io/real-node': 'true' }, tolerations: [realNode] };
    const live = withDesiredHash(desiredDeployment(m, m.spec, before));
    expect(converged(desiredDeployment(m, m.spec, { ...before }), live)).toBe(true);
    for (const after of [{}, { nodeSelector: before.nodeSelector }, { ...before, nodeSelector: { type: 'kwok' } }, { ...before, affinity: zoneAffinity }] as Placement[]) {
      expect(converged(desiredDeployment(m, m.spec, after), live), JSON.stringify(after)).toBe(false);
    }
  });

  it('a tenant cannot set placement: neither the CR spec nor the admission request has such a field, and desired never reads one', () => {
    const tenant = { nodeSelector: { pool: 'gpu' }, tolerations: [{ operator: 'Exists' }], affinity: zoneAffinity, nodeName: 'n', schedulerName: 's', priorityClassName: 'p' };
    const base = { image: 'example.invalid/m:1', replicas: 1, resources: { cpu: '1', memory: '1Gi' } };
    expect(modelServiceSpecSchema.safeParse(base).success && admissionRequestSchema().safeParse({ name: 'chat', ...base }).success).toBe(true);
    for (const [field, value] of Object.entries(tenant)) {
      const spec = { ...base, [field]: value };
      expect(modelServiceSpecSchema.safeParse(spec).success, `spec.${field}`).toBe(false);
      expect(admissionRequestSchema().safeParse({ name: 'chat', ...spec }).success, `request.${field}`).toBe(false);
    }
    // Even a spec object carrying them (a CR read raw), or CR labels/annotations, give the operator's placement only.
    const m = ms({ 'modeldock.io/tenant': 'acme' });
    const raw = { ...m, metadata: { ...m.metadata, annotations: { [PLACEMENT_ANNOTATION]: '{"nodeSelector":{"pool":"gpu"}}' } }, spec: { ...m.spec, ...tenant } } as typeof m;
    const pod = podOf(desiredDeployment(raw, raw.spec, { nodeSelector: { pool: 'cpu' } }));
    expect(pod.nodeSelector).toEqual({ pool: 'cpu' });
    for (const f of ['tolerations', 'affinity', 'nodeName', 'schedulerName', 'priorityClassName']) expect(pod).not.toHaveProperty(f);
  });
});

describe('placementCleanup: what a merge patch cannot remove by leaving it out', () => {
  const m = ms();
  const deployed = (p: Placement, rv = '7') => {
    const d = withDesiredHash(desiredDeployment(m, m.spec, p)) as Deployment;
    return { ...d, metadata: { ...d.metadata, resourceVersion: rv } };
  };
  const want = (p: Placement) => desiredDeployment(m, m.spec, p);
  const t = (key: string): Toleration => ({ key, operator: 'Exists', effect: 'NoSchedule' });
  const node = (key: string) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'Exists' as const }] }] } } });
  const anti = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } }] } };

  it.each<[string, Placement, Placement]>([
    ['nothing before, nothing now', {}, {}],
    ['unchanged', { nodeSelector: { a: '1' }, tolerations: [t('x')], affinity: node('k') }, { nodeSelector: { a: '1' }, tolerations: [t('x')], affinity: node('k') }],
    ['only added: a node selector key, a toleration, an affinity', { nodeSelector: { a: '1' }, tolerations: [t('x')] }, { nodeSelector: { a: '1', b: '2' }, tolerations: [t('x'), t('y')], affinity: node('k') }],
    ['a value changed (the merge patch replaces it)', { nodeSelector: { a: '1' } }, { nodeSelector: { a: '2' } }],
    ['fewer tolerations (an array: replaced whole by the merge patch)', { tolerations: [t('x'), t('y')] }, { tolerations: [t('x')] }],
    ['the same nested affinity key, other contents', { affinity: node('k') }, { affinity: node('j') }],
  ])('%s → nothing to remove (createOrPatch alone converges)', (_n, before, now) => {
    expect(placementCleanup(want(now), deployed(before))).toBeUndefined();
  });

  it.each<[string, Placement, Placement, Record<string, unknown>]>([
    ['all placement dropped', { nodeSelector: { a: '1' }, tolerations: [t('x')], affinity: node('k') }, {}, { nodeSelector: null, tolerations: null, affinity: null }],
    ['a node selector key dropped, another kept and one added', { nodeSelector: { a: '1', b: '2' } }, { nodeSelector: { b: '2', c: '3' } }, { nodeSelector: { a: null, b: '2', c: '3' } }],
    ['tolerations dropped; the node selector stays as it is wanted', { nodeSelector: { a: '1' }, tolerations: [t('x')] }, { nodeSelector: { a: '1' } }, { nodeSelector: { a: '1' }, tolerations: null }],
    ['node affinity swapped for pod anti-affinity', { affinity: node('k') }, { affinity: anti }, { affinity: { nodeAffinity: null, ...anti } }],
    ['the node selector dropped, tolerations added in the same change', { nodeSelector: { a: '1' } }, { tolerations: [t('x')] }, { nodeSelector: null, tolerations: [t('x')] }],
  ])('%s → one merge patch: nulls for what is gone, the rest as wanted, the new annotation, guarded by resourceVersion', (_n, before, now, spec) => {
    const w = want(now);
    expect(placementCleanup(w, deployed(before, '42'))).toEqual({
      metadata: { resourceVersion: '42', annotations: { [PLACEMENT_ANNOTATION]: w.metadata.annotations?.[PLACEMENT_ANNOTATION] ?? null } },
      spec: { template: { spec } },
    });
  });

  it('removes only what ModelDock recorded: a field someone else set, or a Deployment without the annotation, is left alone', () => {
    const foreign = (annotation?: string): Deployment => {
      const d = deployed({});
      const pod = { ...d.spec!.template!.spec!, nodeSelector: { theirs: '1' }, tolerations: [t('theirs')] };
      const annotations = { ...d.metadata.annotations, ...(annotation === undefined ? {} : { [PLACEMENT_ANNOTATION]: annotation }) };
      return { ...d, metadata: { ...d.metadata, annotations }, spec: { ...d.spec!, template: { ...d.spec!.template!, spec: pod } } };
    };
    expect(placementCleanup(want({}), foreign())).toBeUndefined();
    // A broken or foreign annotation removes nothing, and never a field that is not placement.
    for (const bad of ['', 'not json', '[1]', '"x"', 'null', '{"containers":[],"volumes":[]}']) expect(placementCleanup(want({}), foreign(bad)), bad).toBeUndefined();
    expect(placementCleanup(want({ tolerations: [t('x')] }), foreign('{"containers":[]}'))).toBeUndefined();
  });
});
