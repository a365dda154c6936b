import { describe, expect, it } from 'vitest';
import { admissionRequestSchema } from '../../schema/admission.ts';
import { modelServiceSpecSchema } from '../../schema/model-service.ts';
import type { Placement, Toleration } from '../../schema/placement.ts';
import { converged, withDesiredHash } from '../runtime/apply.ts';
import { desiredDeployment, PLACEMENT_ANNOTATION, placementCleanup, podPlacement } from './desired.ts';
import { ms } from './desired-fixtures.ts';
import type { Deployment } from './types.ts';

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
