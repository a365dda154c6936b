// The ledger's decision on a change of replicas (PATCH /requests/:id), PURE: what an admission's
// latest change generation still needs, given the CR under its name and — for a decrease — LIVE
// reads of its Deployment and its pods. Called by decide.ts for delivered/ready admissions only
// (a delete supersedes a change: its release gives everything back).
//
//  - the CR does not carry the desired replicas (or autoscale spec) while the change is unsettled →
//    patch spec.replicas and spec.autoscale (guarded by the resourceVersion read), then record the generation applied —
//    an increase, charged when it was accepted, is settled with it;
//  - a decrease applied → refund its delta only when nothing can run above the new size: the CR and
//    its Deployment ask for at most the new replicas, the Deployment controller has seen that
//    (observedGeneration), its status counts no more, and no more pods carry the admission id
//    (Terminating ones included, as for a release). Otherwise wait, naming the surplus pods.

export interface ScaleProgress {
  /** The latest change generation (1 = the admission). */
  generation: number;
  appliedGeneration: number;
  settledGeneration: number;
  /** Desired replicas (the admitted spec after every change). */
  replicas: number;
  /** The spec's autoscale as compared with the CR's (schema/autoscale.ts autoscaleIdentity; null: none): a change may set or clear it too. */
  autoscale: string | null;
  /** The replicas before the latest change (null at generation 1). */
  fromReplicas: number | null;
}

/** A live read of the Deployment of a ModelService. */
export interface ObservedDeployment {
  generation: number;
  observedGeneration: number;
  specReplicas: number;
  statusReplicas: number;
}

export type ScaleAction =
  | { type: 'applyScale'; generation: number; to: number; autoscale: string | null; resourceVersion: string; patch: boolean; settles: boolean }
  | { type: 'awaitScaleDown'; generation: number; surplusPods: string[]; requeueAfterMs: number }
  | { type: 'refund'; generation: number; from: number; to: number };

const POLL_MS = 2_000;

const unsettled = (c: ScaleProgress): boolean => c.settledGeneration < c.generation;

/** True when the decision needs the live Deployment and pods (a decrease applied, not yet refunded). */
export const awaitsScaleDown = (c: ScaleProgress): boolean => unsettled(c) && c.appliedGeneration >= c.generation;

export function decideScale(
  c: ScaleProgress,
  cr: { resourceVersion: string; replicas: number | null; autoscale: string | null },
  live: { deployment: ObservedDeployment | null; pods: readonly { name: string }[] } | undefined,
): ScaleAction | undefined {
  if (!unsettled(c)) return undefined;
  const increase = c.fromReplicas === null || c.replicas >= c.fromReplicas;
  const differs = cr.replicas !== c.replicas || cr.autoscale !== c.autoscale;
  if (c.appliedGeneration < c.generation || differs) {
    return {
      type: 'applyScale',
      generation: c.generation,
      to: c.replicas,
      autoscale: c.autoscale,
      resourceVersion: cr.resourceVersion,
      patch: differs,
      settles: increase,
    };
  }
  const wait = (surplusPods: string[]): ScaleAction => ({ type: 'awaitScaleDown', generation: c.generation, surplusPods, requeueAfterMs: POLL_MS });
  if (!live) return wait([]); // decided on the cache: confirmed by a live read first
  const d = live.deployment;
  const pods = live.pods.map((p) => p.name).sort();
  const settledDeployment = d !== null && d.observedGeneration >= d.generation && d.specReplicas <= c.replicas && d.statusReplicas <= c.replicas;
  if (!settledDeployment || pods.length > c.replicas) return wait(pods.length > c.replicas ? pods : []);
  return { type: 'refund', generation: c.generation, from: c.fromReplicas ?? c.replicas, to: c.replicas };
}
