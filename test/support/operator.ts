// Support for the operator suites: the CRD installed once (and known to the garbage
// collector), kubectl, ModelService CRUD, and an in-process controller whose API writes and
// reconciles can be counted through its own metrics registry.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { modelServiceReconciler } from '../../controller/modelservice/reconcile.ts';
import { liveReader } from '../../controller/modelservice/reader.ts';
import { setupModelServiceController } from '../../controller/modelservice/setup.ts';
import type { Deployment, ModelService, Pod, Service } from '../../controller/modelservice/types.ts';
import { Controller } from '../../controller/runtime/controller.ts';
import { KubeEventRecorder } from '../../controller/runtime/events.ts';
import type { KubeClient} from '../../controller/runtime/kube.ts';
import { paths } from '../../controller/runtime/kube.ts';
import { createLogger, type Logger } from '../../controller/runtime/log.ts';
import { Manager } from '../../controller/runtime/manager.ts';
import { Metrics } from '../../controller/runtime/metrics.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { LABELS } from '../../schema/model-service.ts';
import type { ModelServiceInput } from './builders.ts';
import { controllerClient, labelAsTenantNamespace } from './install.ts';
import { waitFor } from './wait.ts';

export const CRD_FILE = join(repoRoot, 'k8s/base/crd.yaml');

export async function kubectl(...args: string[]): Promise<string> {
  const stack = inject('stack');
  const { stdout } = await promisify(execFile)(join(stack.binDir, 'kubectl'), ['--kubeconfig', stack.kubeconfig, ...args]);
  return stdout;
}

/**
 * Applies k8s/base/crd.yaml (idempotent), waits until it is served, and until the garbage collector
 * handles ModelService owners (its discovery resyncs every 30 s): a probe ModelService with a
 * dependent ConfigMap is deleted with Foreground propagation, which completes only then.
 */
export async function ensureCrd(client: KubeClient, probeNamespace: string): Promise<void> {
  await kubectl('apply', '--server-side', '--force-conflicts', '-f', CRD_FILE);
  await kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/modelservices.modeldock.io');
  const name = `gc-probe-${Math.random().toString(36).slice(2, 8)}`;
  const owner = await waitFor('ModelService to be served', () =>
    client.create<ModelService>(msPath(probeNamespace), { apiVersion: 'modeldock.io/v1alpha1', kind: 'ModelService', metadata: { name }, spec: { image: 'x/probe:1', replicas: 0, resources: { cpu: '10m', memory: '16Mi' } } }),
  );
  await client.create(`/api/v1/namespaces/${probeNamespace}/configmaps`, {
    metadata: { name, ownerReferences: [{ apiVersion: 'modeldock.io/v1alpha1', kind: 'ModelService', name, uid: owner.metadata.uid, blockOwnerDeletion: true }] },
  });
  await client.delete(`${msPath(probeNamespace)}/${name}`, { propagationPolicy: 'Foreground' });
  await waitFor('the garbage collector to handle ModelService owners', async () => !(await client.getOrUndefined(`${msPath(probeNamespace)}/${name}`)), {
    timeoutMs: 90_000,
    intervalMs: 500,
  });
}

export interface Ops {
  client: KubeClient;
  ns: string;
  create(ms: ModelServiceInput): Promise<ModelService>;
  get(name: string): Promise<ModelService | undefined>;
  patchSpec(name: string, spec: Partial<ModelService['spec']>): Promise<ModelService>;
  deployment(name: string): Promise<Deployment | undefined>;
  service(name: string): Promise<Service | undefined>;
  pods(name: string): Promise<Pod[]>;
  waitPhase(name: string, phase: string, generation?: number, timeoutMs?: number): Promise<ModelService>;
}

/** ModelServices in `ns`, labelled for the installation `instance` (tests install one per namespace: the namespace itself). */
export function ops(client: KubeClient, ns: string, instance: string = ns): Ops {
  const live = liveReader(client);
  const get = (name: string) => live.modelService(ns, name);
  return {
    client,
    ns,
    create: (ms) => client.create<ModelService>(msPath(ns), { ...ms, metadata: { ...ms.metadata, namespace: ns, labels: { ...ms.metadata.labels, [LABELS.instance]: instance } } }),
    get,
    patchSpec: (name, spec) => client.mergePatch<ModelService>(`${msPath(ns)}/${name}`, { spec }),
    deployment: (name) => live.deployment(ns, name),
    service: (name) => live.service(ns, name),
    pods: (name) => live.pods(ns, name),
    waitPhase: (name, phase, generation, timeoutMs = 30_000) =>
      waitFor(
        `${name} phase ${phase}${generation ? ` at generation ${generation}` : ''}`,
        async () => {
          const ms = await get(name);
          const ok = ms?.status?.phase === phase && (generation === undefined || ms.status.observedGeneration === generation);
          if (!ok) throw new Error(ms ? `phase ${ms.status?.phase ?? '-'} at observed generation ${ms.status?.observedGeneration ?? '-'}` : 'no such ModelService'); // not yet
          return ms;
        },
        { timeoutMs },
      ),
  };
}

/** Sum of a counter's values whose labels pass `keep`. */
export function counterSum(metric: { get(): Promise<{ values: Array<{ labels: Record<string, string | number>; value: number }> }> | { values: Array<{ labels: Record<string, string | number>; value: number }> } }, keep: (l: Record<string, string | number>) => boolean = () => true) {
  return Promise.resolve(metric.get()).then((m) => m.values.filter((v) => keep(v.labels)).reduce((a, v) => a + v.value, 0));
}

export interface InProcessOperator {
  mgr: Manager;
  controller: Controller;
  metrics: Metrics;
  client: KubeClient;
  /** API writes this process made, leases excluded (they are the election's, not the reconciler's). */
  writes(): Promise<number>;
  reconciles(): Promise<number>;
  stop(): Promise<void>;
}

export function testLogger(): Logger {
  return createLogger({ level: process.env.MODELDOCK_TEST_LOG === '1' ? 'debug' : 'warn', write: (l) => process.stderr.write(l) });
}

/**
 * The same wiring as controller/main.ts, in this process, without leader election, authenticated
 * as `namespace`'s modeldock-controller ServiceAccount (ModelDock installed there on first use).
 */
export async function startInProcessOperator(namespace: string, opts: { workers?: number } = {}): Promise<InProcessOperator> {
  const metrics = new Metrics();
  const log = testLogger();
  const client = await controllerClient(namespace, { metrics, fieldManager: 'modeldock-controller' });
  await labelAsTenantNamespace(namespace, 'acme'); // the ModelService controller acts on CRs made by hand here
  const mgr = new Manager({ client, instance: namespace, log, metrics });
  const events = new KubeEventRecorder({ client, controller: 'modeldock.io/controller', instance: 'test', log });
  const { controller } = setupModelServiceController(mgr, { workers: opts.workers ?? 2, resyncMs: 0, events, pollMs: 250 });
  await mgr.start();
  await mgr.waitForLeadership();
  return {
    mgr,
    controller,
    metrics,
    client,
    writes: () => counterSum(metrics.kubeWrites, (l) => l.resource !== 'leases'),
    reconciles: () => counterSum(metrics.reconcileTotal, (l) => l.controller === 'modelservice'),
    stop: async () => {
      await mgr.stop();
      await events.flush();
    },
  };
}

/** A controller instance with no informers: reads come from `reader` (stale snapshot, live API…). */
export function bareController(client: KubeClient, cache: Parameters<typeof modelServiceReconciler>[0]['cache']): Controller {
  const log = testLogger();
  return new Controller({
    name: 'modelservice',
    log,
    reconcile: modelServiceReconciler({ client, cache, events: { record: () => undefined } }),
  });
}

/** Collection path of ModelServices in `ns`, or the path of one of them. */
export const msPath = (ns: string, name?: string): string => (name ? paths.modelService(ns, name) : paths.modelServices(ns));

export { paths };
