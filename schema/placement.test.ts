import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { placementFrom, placementSettings } from './placement.ts';

// As controller/main.ts reports an invalid environment (then exits 2): `VARIABLE.path: message`.
const parse = (env: Record<string, string>) => {
  const r = z.object(placementSettings).safeParse(env);
  return r.success ? { ok: placementFrom(r.data) } : { error: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
};

describe('placement settings (controller environment)', () => {
  it.each<[string, Record<string, string>, unknown]>([
    ['unset', {}, { gpu: {} }],
    ['empty or blank (the shipped manifest)', { POD_NODE_SELECTOR: '', POD_TOLERATIONS: ' ', POD_AFFINITY: '', POD_GPU_NODE_SELECTOR: '', POD_GPU_TOLERATIONS: '\n' }, { gpu: {} }],
    [
      'the local stack’s real node',
      { POD_NODE_SELECTOR: '{"modeldock.io/real-node":"true"}', POD_TOLERATIONS: '[{"key":"modeldock.io/real-node","operator":"Equal","value":"true","effect":"NoSchedule"}]' },
      { nodeSelector: { 'modeldock.io/real-node': 'true' }, tolerations: [{ key: 'modeldock.io/real-node', operator: 'Equal', value: 'true', effect: 'NoSchedule' }], gpu: {} },
    ],
    [
      'a GPU pool',
      {
        POD_GPU_NODE_SELECTOR: '{"cloud.google.com/gke-accelerator":"nvidia-l4"}',
        POD_GPU_TOLERATIONS: '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
        POD_AFFINITY: JSON.stringify({
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['e2-small'] }] }] } },
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'modeldock' } } } }] },
        }),
      },
      {
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['e2-small'] }] }] } },
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'modeldock' } } } }] },
        },
        gpu: { nodeSelector: { 'cloud.google.com/gke-accelerator': 'nvidia-l4' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] },
      },
    ],
    [
      'empty strings are dropped from tolerations (the API server omits them: they would never compare equal)',
      { POD_TOLERATIONS: '[{"operator":"Exists","key":"","value":"","effect":""},{"key":"a","operator":"Exists","value":"","effect":"NoExecute","tolerationSeconds":0}]' },
      { tolerations: [{ operator: 'Exists' }, { key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }], gpu: {} },
    ],
    [
      'an affinity without what the API server omits (empty lists, empty matchLabels), with empty selectors kept (they select everything)',
      { POD_AFFINITY: '{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"z","namespaces":[],"labelSelector":{"matchLabels":{},"matchExpressions":[{"key":"k","operator":"Exists","values":[]}]},"namespaceSelector":{}}],"preferredDuringSchedulingIgnoredDuringExecution":[]}}' },
      { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'z', labelSelector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] }, namespaceSelector: {} }] } }, gpu: {} },
    ],
    ['Gt/Lt with one integer; node fields', { POD_AFFINITY: '{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"gpu-mem","operator":"Gt","values":["40"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}}]}}' }, undefined],
  ])('%s', (_n, env, want) => {
    const r = parse(env);
    expect(r.error).toBeUndefined();
    if (want !== undefined) expect(JSON.parse(JSON.stringify(r.ok))).toEqual(want);
  });

  it.each([
    ['not JSON', { POD_NODE_SELECTOR: 'pool=gpu' }, 'POD_NODE_SELECTOR: is not JSON'],
    ['a node selector that is a list', { POD_NODE_SELECTOR: '["pool"]' }, 'POD_NODE_SELECTOR: Invalid input: expected record'],
    ['a node selector value that is not a string', { POD_NODE_SELECTOR: '{"pool":1}' }, 'POD_NODE_SELECTOR.pool: Invalid input: expected string'],
    ['a node selector key that is no label key', { POD_GPU_NODE_SELECTOR: '{"bad key":"x"}' }, 'POD_GPU_NODE_SELECTOR.bad key: must be a label key'],
    ['a label key with a bad prefix', { POD_NODE_SELECTOR: '{"Example.com/pool":"x"}' }, 'POD_NODE_SELECTOR.Example.com/pool: must be a label key'],
    ['a label name over 63 characters', { POD_NODE_SELECTOR: `{"${'a'.repeat(64)}":"x"}` }, 'must be a label key'],
    ['a label value over 63 characters', { POD_NODE_SELECTOR: `{"pool":"${'a'.repeat(64)}"}` }, 'POD_NODE_SELECTOR.pool: Too big'],
    ['tolerations that are an object', { POD_TOLERATIONS: '{"key":"a"}' }, 'POD_TOLERATIONS: Invalid input: expected array'],
    ['a misspelt toleration field', { POD_TOLERATIONS: '[{"key":"a","operator":"Exists","efect":"NoSchedule"}]' }, 'POD_TOLERATIONS.0: Unrecognized key: "efect"'],
    ['an unknown operator', { POD_GPU_TOLERATIONS: '[{"key":"a","operator":"Exist"}]' }, 'POD_GPU_TOLERATIONS.0.operator: Invalid option'],
    ['an unknown effect', { POD_TOLERATIONS: '[{"key":"a","operator":"Exists","effect":"NoSchedul"}]' }, 'POD_TOLERATIONS.0.effect: Invalid option'],
    ['no key without Exists', { POD_TOLERATIONS: '[{"value":"x"}]' }, 'POD_TOLERATIONS.0.operator: must be Exists when key is empty'],
    ['a value with Exists', { POD_TOLERATIONS: '[{"key":"a","operator":"Exists","value":"x"}]' }, 'POD_TOLERATIONS.0.value: must be empty when operator is Exists'],
    ['a value that is no label value', { POD_TOLERATIONS: '[{"key":"a","operator":"Equal","value":"a b"}]' }, 'POD_TOLERATIONS.0.value: must be a label value'],
    ['tolerationSeconds without NoExecute', { POD_TOLERATIONS: '[{"key":"a","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5}]' }, 'POD_TOLERATIONS.0.tolerationSeconds: needs effect NoExecute'],
    ['an unknown affinity', { POD_AFFINITY: '{"nodeAfinity":{}}' }, 'POD_AFFINITY: Unrecognized key: "nodeAfinity"'],
    [
      'In without values',
      { POD_AFFINITY: '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In"}]}]}}}' },
      'POD_AFFINITY.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchExpressions.0.values: must not be empty for In',
    ],
    ['Exists with values', { POD_AFFINITY: '{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"z","labelSelector":{"matchExpressions":[{"key":"k","operator":"Exists","values":["x"]}]}}]}}' }, 'values: must be empty for Exists'],
    ['Gt with a word', { POD_AFFINITY: '{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"k","operator":"Gt","values":["big"]}]}}]}}' }, 'values: must be one integer for Gt'],
    ['Gt on a pod label selector', { POD_AFFINITY: '{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"z","labelSelector":{"matchExpressions":[{"key":"k","operator":"Gt","values":["1"]}]}}]}}' }, 'operator: Invalid option'],
    ['no node selector terms', { POD_AFFINITY: '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}' }, 'nodeSelectorTerms: Too small'],
    ['a weight over 100', { POD_AFFINITY: '{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":101,"podAffinityTerm":{"topologyKey":"z"}}]}}' }, '.0.weight: Too big'],
    ['a pod affinity term without topologyKey', { POD_AFFINITY: '{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{}]}}' }, '.0.topologyKey: Invalid input'],
  ])('%s → refused, naming the variable', (_n, env, message) => {
    expect(parse(env).error).toContain(message);
  });
});
