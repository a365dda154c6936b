// Fluent fixtures for ModelService objects: makeModelService('a').replicas(2).image(...).obj()
import { API_VERSION, KIND, LABELS, type ModelService } from '../../schema/model-service.ts';

export const IMAGES = {
  ready: 'example.invalid/modeldock/model:1',
  neverReady: 'example.invalid/modeldock/never-ready:1',
  pullBackOff: 'example.invalid/modeldock/pull-backoff:1',
  crashLoop: 'example.invalid/modeldock/crash-loop:1',
} as const;

/** What we send to create a ModelService (spec fields the CRD defaults may be omitted). */
export interface ModelServiceInput {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Partial<ModelService['spec']> & { image: string; replicas: number };
}

class ModelServiceBuilder {
  readonly #o: ModelServiceInput;
  constructor(name: string) {
    this.#o = { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { image: IMAGES.ready, replicas: 1, resources: { cpu: '100m', memory: '128Mi' } } };
  }
  /** In `ns`, as the installation of `ns` sees it: tests install ModelDock per namespace with INSTANCE = that namespace (scripts/testenv/install.ts installEnv). */
  namespace(ns: string): this {
    this.#o.metadata.namespace = ns;
    this.#o.metadata.labels = { ...this.#o.metadata.labels, [LABELS.instance]: ns };
    return this;
  }
  replicas(n: number): this {
    this.#o.spec.replicas = n;
    return this;
  }
  image(image: string): this {
    this.#o.spec.image = image;
    return this;
  }
  port(port: number): this {
    this.#o.spec.port = port;
    return this;
  }
  resources(r: ModelService['spec']['resources']): this {
    this.#o.spec.resources = r;
    return this;
  }
  env(name: string, value: string): this {
    this.#o.spec.env = [...(this.#o.spec.env ?? []), { name, value }];
    return this;
  }
  /** Labels the admission path sets: admission id and tenant. */
  admitted(admissionId: string, tenant: string): this {
    this.#o.metadata.labels = { ...this.#o.metadata.labels, [LABELS.admissionId]: admissionId, [LABELS.tenant]: tenant };
    return this;
  }
  annotation(k: string, v: string): this {
    this.#o.metadata.annotations = { ...this.#o.metadata.annotations, [k]: v };
    return this;
  }
  obj(): ModelServiceInput {
    return structuredClone(this.#o);
  }
}

export const makeModelService = (name: string): ModelServiceBuilder => new ModelServiceBuilder(name);
