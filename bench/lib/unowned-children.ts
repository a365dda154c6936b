// The Deployment and Service ModelDock's controller would create for a ModelService, owned by
// nothing: what a kube-controller-manager baseline creates directly, so that both sides of a
// comparison run the identical pod template (controller/modelservice/desired.ts builds both).
import { desiredDeployment, desiredService } from '../../controller/modelservice/desired.ts';
import type { Deployment, Service } from '../../controller/modelservice/types.ts';
import { API_VERSION, KIND, type ModelService, type ModelServiceSpec } from '../../schema/model-service.ts';
import type { Placement } from '../../schema/placement.ts';

export interface UnownedChildrenOptions {
  /** The ModelService's own labels (e.g. modeldock.io/instance): they shape the children's labels. */
  labels?: Record<string, string>;
  /** The operator's placement (the controller's POD_* settings); none by default, as shipped. */
  placement?: Placement;
}

/** The children of a ModelService `name` in `namespace` with `spec`, without owner references. */
export function unownedChildren(name: string, namespace: string, spec: ModelServiceSpec, { labels, placement = {} }: UnownedChildrenOptions = {}): { deployment: Deployment; service: Service } {
  const ms: ModelService = { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace, ...(labels ? { labels } : {}) }, spec };
  // No owner: the object the controller would own them through does not exist here.
  const unowned = <T extends { metadata: object }>(o: T): T => ({ ...o, metadata: { ...o.metadata, ownerReferences: undefined } });
  return { deployment: unowned(desiredDeployment(ms, spec, placement)), service: unowned(desiredService(ms, spec)) };
}
