// Fixtures shared by the status-*.test.ts suites (status.ts): a ModelService, its Deployment,
// pods (healthy, pulling, crash-looping) and EndpointSlices, and two instants. Test code only.
import type { ModelService, ModelServiceStatus } from '../../schema/model-service.ts';
import type { Deployment, EndpointSlice, Pod } from './types.ts';

export const T0 = new Date('2026-01-01T00:00:00Z');
export const T1 = new Date('2026-01-01T00:01:00Z');

export const ms = (o: { generation?: number; status?: ModelServiceStatus; deleting?: boolean; annotations?: Record<string, string> } = {}): ModelService => ({
  apiVersion: 'modeldock.io/v1alpha1',
  kind: 'ModelService',
  metadata: {
    name: 'a',
    namespace: 'lab',
    uid: 'u',
    generation: o.generation ?? 1,
    creationTimestamp: '2025-12-31T23:59:00Z',
    annotations: o.annotations,
    deletionTimestamp: o.deleting ? '2026-01-01T00:00:30Z' : undefined,
  },
  spec: { image: 'x/y:1', replicas: 2, port: 8000, resources: { cpu: '100m', memory: '128Mi' }, env: [], args: [], readinessPath: '/healthz' },
  status: o.status,
});

export const dep = (s: Partial<NonNullable<Deployment['status']>>, generation = 1, replicas = 2): Deployment => ({
  metadata: { name: 'a', generation },
  spec: { replicas },
  status: { observedGeneration: generation, ...s },
});
export const done = dep({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });

export const pod = (name: string, cs: NonNullable<Pod['status']>['containerStatuses'] = [], extra: Partial<NonNullable<Pod['status']>> = {}): Pod => ({
  metadata: { name },
  spec: { nodeName: 'n' },
  status: { containerStatuses: cs, ...extra },
});
export const pullBackOff = pod('p1', [{ name: 'model', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } }]);
export const crashLoop = pod('p2', [{ name: 'model', restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } }]);

export const spec = { replicas: 2, port: 8000 };
export const svc = { metadata: { name: 'a' } };
/** A slice of the Service `a` listing `ready` ready endpoints (and one not ready). */
export const slice = (ready: number, triggerTime?: string): EndpointSlice => ({
  metadata: { name: `a-${ready}`, labels: { 'kubernetes.io/service-name': 'a' }, annotations: triggerTime ? { 'endpoints.kubernetes.io/last-change-trigger-time': triggerTime } : undefined },
  endpoints: [...Array.from({ length: ready }, (_, i) => ({ addresses: [`10.0.0.${i}`], conditions: { ready: true } })), { addresses: ['10.0.1.1'], conditions: { ready: false } }],
});
export const slices = [slice(2)];
