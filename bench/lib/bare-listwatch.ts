// B6's baseline (a): a bare client-node process holding the objects ModelDock's controller caches
// — client-node's own ListWatch (its generated list functions, its Watch) over ModelServices and
// over the Deployments, Services, Pods and EndpointSlices with ModelDock's managed-by label in one
// namespace (controller/runtime/cache.ts CACHED_KINDS).
// Usage: node bench/lib/bare-listwatch.ts <kubeconfig> <namespace> <settle ms>
// Prints one JSON line {objects, rssMiB, heapUsedMiB, heapTotalMiB, externalMiB, anonMiB, fileMiB} after every cache synced and `settle` ms.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api, KubeConfig, ListWatch, Watch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { GROUP, LABELS, MANAGED_BY, PLURAL, VERSION } from '../../schema/model-service.ts';
import { rssParts } from './proc-stats.ts';

const [kubeconfig, namespace, settle = '5000'] = process.argv.slice(2);
if (!kubeconfig || !namespace) throw new Error('usage: bare-listwatch.ts <kubeconfig> <namespace> [settle ms]');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const discovery = kc.makeApiClient(DiscoveryV1Api);
const labelSelector = `${LABELS.managedBy}=${MANAGED_BY}`;
type List = KubernetesListObject<KubernetesObject>;

const kinds: Array<[string, () => Promise<List>, string | undefined]> = [
  [`/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}`, async () => (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL })) as List, undefined],
  [`/apis/apps/v1/namespaces/${namespace}/deployments`, async () => (await apps.listNamespacedDeployment({ namespace, labelSelector })) as List, labelSelector],
  [`/api/v1/namespaces/${namespace}/services`, async () => (await core.listNamespacedService({ namespace, labelSelector })) as List, labelSelector],
  [`/api/v1/namespaces/${namespace}/pods`, async () => (await core.listNamespacedPod({ namespace, labelSelector })) as List, labelSelector],
  [`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, async () => (await discovery.listNamespacedEndpointSlice({ namespace, labelSelector })) as List, labelSelector],
];
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
