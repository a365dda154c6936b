// The parts of the built-in objects the ModelService controller reads or writes, as the API
// server sends them (plain JSON, RFC 3339 time strings). Not client-node's classes, whose
// timestamps are Date objects.
import type { ModelService } from '../../schema/model-service.ts';
import type { KubeObject } from '../runtime/informer.ts';

export type { ModelService };

export interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Record<string, unknown>;
  securityContext?: Record<string, unknown>;
  imagePullPolicy?: string;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}

export interface Deployment extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers: Container[]; [k: string]: unknown } };
    [k: string]: unknown;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

export interface Service extends KubeObject {
  spec?: {
    type?: string;
    selector?: Record<string, string>;
    ports?: Array<{ name?: string; port: number; targetPort?: number | string; protocol?: string }>;
    [k: string]: unknown;
  };
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { exitCode?: number; reason?: string; message?: string; startedAt?: string; finishedAt?: string };
}

export interface Pod extends KubeObject {
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    startTime?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }>;
    containerStatuses?: Array<{ name: string; ready?: boolean; restartCount?: number; state?: ContainerState; lastState?: ContainerState }>;
  };
}

/** discovery.k8s.io/v1: the endpoints the EndpointSlice controller found for a Service. */
export interface EndpointSlice extends KubeObject {
  endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean }; targetRef?: { kind?: string; name?: string } }>;
}
