// B6's baseline (a): a bare client-node process holding the objects ModelDock's controller caches
// — client-node's own ListWatch (its generated list functions, its Watch) over every kind of the
// controller's cache, cluster-wide with the same label selectors (controller/runtime/cache.ts
// CACHED_KINDS and selectorFor; the benchmarks' controllers run with INSTANCE = their namespace).
// Usage: node bench/lib/bare-listwatch.ts <kubeconfig> <instance> <settle ms>
// Prints one JSON line {objects, rssMiB, heapUsedMiB, heapTotalMiB, externalMiB, anonMiB, fileMiB} after every cache synced and `settle` ms.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api, KubeConfig, ListWatch, NetworkingV1Api, Watch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { CACHED_KINDS, selectorFor, type CachedKind } from '../../controller/runtime/cache.ts';
import { GROUP, PLURAL, VERSION } from '../../schema/model-service.ts';
import { rssParts } from './proc-stats.ts';

const [kubeconfig, instance, settle = '5000'] = process.argv.slice(2);
if (!kubeconfig || !instance) throw new Error('usage: bare-listwatch.ts <kubeconfig> <instance> [settle ms]');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const discovery = kc.makeApiClient(DiscoveryV1Api);
const networking = kc.makeApiClient(NetworkingV1Api);
type List = KubernetesListObject<KubernetesObject>;

/** client-node's generated cluster-wide list of each kind the controller caches. */
const LISTS: Record<CachedKind, (labelSelector: string | undefined) => Promise<unknown>> = {
  ModelService: (labelSelector) => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, labelSelector }),
  Deployment: (labelSelector) => apps.listDeploymentForAllNamespaces({ labelSelector }),
  Service: (labelSelector) => core.listServiceForAllNamespaces({ labelSelector }),
  Pod: (labelSelector) => core.listPodForAllNamespaces({ labelSelector }),
  EndpointSlice: (labelSelector) => discovery.listEndpointSliceForAllNamespaces({ labelSelector }),
  Namespace: (labelSelector) => core.listNamespace({ labelSelector }),
  ResourceQuota: (labelSelector) => core.listResourceQuotaForAllNamespaces({ labelSelector }),
  NetworkPolicy: (labelSelector) => networking.listNetworkPolicyForAllNamespaces({ labelSelector }),
};
const kinds = (Object.keys(CACHED_KINDS) as CachedKind[]).map((kind) => {
  const selector = selectorFor(kind, instance);
  return [CACHED_KINDS[kind].path, async () => (await LISTS[kind](selector)) as List, selector] as const;
});
const informers = kinds.map(([path, list, selector]) => new ListWatch<KubernetesObject>(path, new Watch(kc), list, false, selector));
await Promise.all(informers.map((i) => i.start()));
await new Promise((r) => setTimeout(r, Number(settle)));
const m = process.memoryUsage();
const objects = informers.reduce((n, i) => n + i.list().length, 0);
const parts = rssParts('self');
const mib = (b: number) => b / 2 ** 20;
process.stdout.write(`${JSON.stringify({ objects, rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), heapTotalMiB: mib(m.heapTotal), externalMiB: mib(m.external), anonMiB: parts?.anon, fileMiB: parts?.file })}\n`);
await Promise.all(informers.map((i) => i.stop()));
process.exit(0);
