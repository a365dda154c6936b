// Where tenant pods run: the operator's node selector, tolerations and affinity (core/v1 shapes),
// validated when the controller starts (controller/main.ts reads them as JSON from its
// environment) with Kubernetes' own rules, so a typo stops the process with the variable's
// name instead of every Deployment being refused by the API server later. Tenants never set
// placement: neither the admission request nor the ModelService spec has such a field.
import { z } from 'zod';

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A label key: [DNS subdomain prefix/]name, the name ≤ 63 characters (metav1 qualified name). */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = key.slice(slash + 1);
  return NAME.test(name) && name.length <= 63 && (prefix === undefined || (prefix.length <= 253 && DNS1123_SUBDOMAIN.test(prefix)));
}
const LABEL_KEY_MESSAGE = 'must be a label key: [prefix/]name, name ≤ 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric, prefix a DNS subdomain';
export const labelKey = z.string().refine(isLabelKey, LABEL_KEY_MESSAGE);

/** A label value: empty, or ≤ 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric. */
export const labelValue = z.string().max(63).regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/, 'must be a label value: ≤ 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric');

/** A map of labels (zod's record keys report only "Invalid key in record": the keys are checked here). */
const labels = () =>
  z.record(z.string(), labelValue).superRefine((map, ctx) => {
    for (const key of Object.keys(map)) if (!isLabelKey(key)) ctx.addIssue({ code: 'custom', path: [key], message: LABEL_KEY_MESSAGE });
  });
export const nodeSelectorSchema = labels().describe('core/v1 PodSpec.nodeSelector: node labels a pod requires.');
export type NodeSelector = z.output<typeof nodeSelectorSchema>;

/**
 * core/v1 Toleration, checked as the API server checks it. Empty strings are dropped (the API
 * server omits them, and a field it drops would never compare equal: a write on every reconcile).
 */
export const tolerationSchema = z
  .strictObject({
    key: z
      .string()
      .refine((k) => k === '' || isLabelKey(k), LABEL_KEY_MESSAGE)
      .optional(),
    operator: z.enum(['Exists', 'Equal', '']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute', '']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .superRefine((t, ctx) => {
    if (!t.key && t.operator !== 'Exists') ctx.addIssue({ code: 'custom', path: ['operator'], message: 'must be Exists when key is empty (tolerate every taint)' });
    if (t.operator === 'Exists' && t.value) ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be empty when operator is Exists' });
    if (t.operator !== 'Exists' && !labelValue.safeParse(t.value ?? '').success) ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be a label value (≤ 63 characters of [A-Za-z0-9-_.])' });
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') ctx.addIssue({ code: 'custom', path: ['tolerationSeconds'], message: 'needs effect NoExecute' });
  })
  .transform((t) => Object.fromEntries(Object.entries(t).filter(([, v]) => v !== '')) as Toleration);
export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}
export const tolerationsSchema = z.array(tolerationSchema).describe('core/v1 PodSpec.tolerations: taints a pod tolerates.');

/** In/NotIn need values; Exists/DoesNotExist take none; Gt/Lt (nodes only) one integer. */
const requirement = <Op extends string>(operators: readonly [Op, ...Op[]]) =>
  z
    .strictObject({ key: labelKey, operator: z.enum(operators), values: z.array(z.string()).optional() })
    .superRefine((r, ctx) => {
      const n = r.values?.length ?? 0;
      const op: string = r.operator;
      if ((op === 'In' || op === 'NotIn') && n === 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `must not be empty for ${op}` });
      if ((op === 'Exists' || op === 'DoesNotExist') && n > 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `must be empty for ${op}` });
      if ((op === 'Gt' || op === 'Lt') && (n !== 1 || !/^-?\d+$/.test(r.values![0]!))) ctx.addIssue({ code: 'custom', path: ['values'], message: `must be one integer for ${op}` });
    });

const nodeSelectorTerm = z.strictObject({
  matchExpressions: z.array(requirement(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'])).optional(),
  matchFields: z.array(requirement(['In', 'NotIn'])).optional(),
});
const weight = z.number().int().min(1).max(100);
const labelSelector = z.strictObject({
  matchLabels: labels().optional(),
  matchExpressions: z.array(requirement(['In', 'NotIn', 'Exists', 'DoesNotExist'])).optional(),
});
const podAffinityTerm = z.strictObject({
  labelSelector: labelSelector.optional(),
  namespaceSelector: labelSelector.optional(),
  namespaces: z.array(z.string().min(1)).optional(),
  topologyKey: labelKey,
  matchLabelKeys: z.array(labelKey).optional(),
  mismatchLabelKeys: z.array(labelKey).optional(),
});
const podAffinity = z.strictObject({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTerm).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight, podAffinityTerm })).optional(),
});

/**
 * Drops what the API server omits (`omitempty` lists and the matchLabels map, when empty) so the
 * object compares equal to what it stores; keeps empty objects: an empty labelSelector or
 * namespaceSelector selects everything, an absent one nothing (or the pod's own namespace).
 */
function omitEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(omitEmpty);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = omitEmpty(x);
    if (Array.isArray(y) && y.length === 0) continue;
    if (k === 'matchLabels' && Object.keys(y as object).length === 0) continue;
    out[k] = y;
  }
  return out;
}

const affinityShape = z.strictObject({
  nodeAffinity: z
    .strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: z.strictObject({ nodeSelectorTerms: z.array(nodeSelectorTerm).min(1) }).optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight, preference: nodeSelectorTerm })).optional(),
    })
    .optional(),
  podAffinity: podAffinity.optional(),
  podAntiAffinity: podAffinity.optional(),
});
export type Affinity = z.output<typeof affinityShape>;
/** core/v1 Affinity: node affinity, pod affinity and pod anti-affinity. */
export const affinitySchema = affinityShape.transform((a) => omitEmpty(a) as Affinity).describe('core/v1 PodSpec.affinity.');

/**
 * The operator's placement of tenant pods: applied to every pod ModelDock generates; `gpu` adds
 * to it for pods that request GPUs (`nvidia.com/gpu`), e.g. the GPU pool's taint and label.
 */
export interface Placement {
  nodeSelector?: NodeSelector;
  tolerations?: Toleration[];
  affinity?: Affinity;
  gpu?: { nodeSelector?: NodeSelector; tolerations?: Toleration[] };
}

/**
 * A setting holding JSON (an environment variable): unset or blank → undefined; otherwise parsed
 * and validated by `schema`. Issues carry the path inside the JSON (e.g. `0.operator`).
 */
export const jsonSetting = <S extends z.ZodType>(schema: S) =>
  z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (!text?.trim()) return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `is not JSON (${(err as Error).message})` });
        return z.NEVER;
      }
    })
    .pipe(schema.optional());

/**
 * The controller's placement settings (controller/main.ts): environment variables holding JSON,
 * unset or empty = none. The GPU ones add to the others on pods that request `nvidia.com/gpu`.
 */
export const placementSettings = {
  POD_NODE_SELECTOR: jsonSetting(nodeSelectorSchema),
  POD_TOLERATIONS: jsonSetting(tolerationsSchema),
  POD_AFFINITY: jsonSetting(affinitySchema),
  POD_GPU_NODE_SELECTOR: jsonSetting(nodeSelectorSchema),
  POD_GPU_TOLERATIONS: jsonSetting(tolerationsSchema),
};
export type PlacementSettings = z.output<z.ZodObject<typeof placementSettings>>;

export function placementFrom(s: PlacementSettings): Placement {
  return {
    nodeSelector: s.POD_NODE_SELECTOR,
    tolerations: s.POD_TOLERATIONS,
    affinity: s.POD_AFFINITY,
    gpu: { nodeSelector: s.POD_GPU_NODE_SELECTOR, tolerations: s.POD_GPU_TOLERATIONS },
  };
}
