// When the pods of each ModelService (or of a Deployment built like one) were first seen bound to a
// node, with their container running, and Ready — in milliseconds, as a watch delivers them, where
// the pods' own times (PodScheduled, startedAt, Ready) have second precision. One watch over every
// namespace, by label, so both paths of a benchmark are observed the same way.
import { Watch } from '@kubernetes/client-node';
import { LABELS } from '../../schema/model-service.ts';
import type { StackInfo } from '../../scripts/testenv/stack.ts';
import { adminKubeConfig } from './context.ts';

export const POD_MOMENTS = ['pod bound', 'container running', 'pod Ready'] as const;
export type PodMoment = (typeof POD_MOMENTS)[number];

interface Pod {
  metadata?: { labels?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: { conditions?: Array<{ type: string; status: string }>; containerStatuses?: Array<{ state?: { running?: unknown } }> };
}

export interface PodMoments {
  /** performance.now() of each moment of the first pod of `modelService` (label modeldock.io/model-service). */
  of(modelService: string): Partial<Record<PodMoment, number>>;
  stop(): void;
}

/** Watches pods labelled `selector` in every namespace from now on (again after the server ends the watch). */
export async function watchPodMoments(stack: StackInfo, selector: string): Promise<PodMoments> {
  const seen = new Map<string, Partial<Record<PodMoment, number>>>();
  const watch = new Watch(adminKubeConfig(stack));
  let stopped = false;
  let abort: AbortController | undefined;
  const onEvent = (_phase: string, pod: Pod) => {
    const key = pod.metadata?.labels?.[LABELS.modelService];
    if (!key) return;
    const now = performance.now();
    const m = seen.get(key) ?? {};
    seen.set(key, m);
    if (pod.spec?.nodeName) m['pod bound'] ??= now;
    if (pod.status?.containerStatuses?.some((c) => c.state?.running)) m['container running'] ??= now;
    if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) m['pod Ready'] ??= now;
  };
  const start = async (): Promise<void> => {
    abort = await watch.watch('/api/v1/pods', { labelSelector: selector }, onEvent, () => {
      if (!stopped) void start();
    });
  };
  await start();
  return {
    of: (modelService) => seen.get(modelService) ?? {},
    stop() {
      stopped = true;
      abort?.abort();
    },
  };
}
