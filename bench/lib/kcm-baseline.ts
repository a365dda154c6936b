// A kube-controller-manager convergence baseline: N Deployment + Service pairs, exactly the children
// ModelDock's controller would make for a spec (unowned-children.ts), created by the admin at a
// closed-loop concurrency and converged by kube-controller-manager alone; and the namespace's
// removal afterwards (until it is gone, its pods first), so that what is measured next does not
// share the cluster with those pods or with the deletion's work.
// Progress is read from the API server's watch cache (resourceVersion 0): at 10,000 objects a
// quorum list every few seconds costs the saturated API server what the objects under test need.
import { paths, type KubeClient } from '../../controller/runtime/kube.ts';
import type { Deployment } from '../../controller/modelservice/types.ts';
import { LABELS, MANAGED_BY, type ModelServiceSpec } from '../../schema/model-service.ts';
import { until } from './kube.ts';
import { closedLoop } from './load.ts';
import { fmt } from './stats.ts';
import { unownedChildren } from './unowned-children.ts';

export interface DeploymentBaseline {
  admin: KubeClient;
  namespace: string;
  n: number;
  spec: ModelServiceSpec;
  /** Concurrent creates (a pair's Deployment, then its Service). */
  concurrency: number;
  /** Give up this long after the first create. */
  windowMs: number;
  pollMs: number;
  /** Name of the i-th pair; the ModelService phase it stands for names its objects alike. */
  name: (i: number) => string;
  /** The ModelService's own labels (they shape the children's). */
  labels?: Record<string, string>;
  log: (msg: string) => void;
}

export interface BaselineResult {
  createdS: number;
  /** From the first create until every Deployment had readyReplicas == replicas; undefined when the window closed first. */
  convergedS?: number;
  ready: number;
}

const minutesSince = (t: number) => fmt((performance.now() - t) / 60_000);

/** Creates the pairs and waits until every Deployment reports all its replicas ready. */
export async function convergeDeployments(b: DeploymentBaseline): Promise<BaselineResult> {
  const t = performance.now();
  await closedLoop({
    concurrency: b.concurrency,
    total: b.n,
    op: async (i) => {
      const { deployment, service } = unownedChildren(b.name(i), b.namespace, b.spec, { labels: b.labels });
      await b.admin.create(paths.deployments(b.namespace), deployment);
      await b.admin.create(paths.services(b.namespace), service);
    },
  });
  const createdS = (performance.now() - t) / 1000;
  let ready = 0;
  const remainingMs = Math.max(0, b.windowMs - (performance.now() - t));
  const converged = await until(`${b.n} Deployments ready`, remainingMs, async () => {
    // Ours only: an installed namespace holds the install's own Deployment too.
    const list = await b.admin.list<Deployment & { status?: { readyReplicas?: number; observedGeneration?: number } }>(paths.deployments(b.namespace), { resourceVersion: '0', labelSelector: `${LABELS.managedBy}=${MANAGED_BY}` });
    ready = list.items.filter((d) => (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) && (d.status?.readyReplicas ?? 0) === d.spec?.replicas).length;
    b.log(`kcm baseline: ${ready} of ${b.n} Deployments ready after ${minutesSince(t)} min`);
    return ready === b.n;
  }, b.pollMs).then(() => true, () => false);
  return { createdS, ready, ...(converged ? { convergedS: (performance.now() - t) / 1000 } : {}) };
}

export interface NamespaceDeletion {
  /** Seconds from the delete until no pod of the namespace was listed (undefined: not within the deadline). */
  podsGoneS?: number;
  /** Seconds until the namespace itself was gone: kube-controller-manager's namespace controller had nothing left to delete in it. */
  goneS?: number;
  /** Pods still listed at the last look. */
  podsLeft: number;
}

/**
 * Deletes `namespace` and waits until it is gone (its pods first), at most `deadlineMs`: the
 * namespace controller's and the garbage collector's work on its objects is then over too.
 */
export async function deleteNamespaceAndWait(admin: KubeClient, namespace: string, deadlineMs: number, pollMs: number, log: (msg: string) => void): Promise<NamespaceDeletion> {
  const t = performance.now();
  const since = () => (performance.now() - t) / 1000;
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  const out: NamespaceDeletion = { podsLeft: Number.NaN };
  await until(`namespace ${namespace} gone`, deadlineMs, async () => {
    if (!(await admin.getOrUndefined(`/api/v1/namespaces/${namespace}`))) {
      out.goneS = since();
      out.podsLeft = 0;
      out.podsGoneS ??= out.goneS;
      return true;
    }
    out.podsLeft = (await admin.list(paths.pods(namespace), { resourceVersion: '0' })).items.length;
    if (out.podsLeft === 0) out.podsGoneS ??= since();
    log(`kcm baseline: namespace ${namespace} deleted ${fmt(since())} s ago, ${out.podsLeft} pods left`);
    return false;
  }, pollMs).catch(() => undefined);
  return out;
}
