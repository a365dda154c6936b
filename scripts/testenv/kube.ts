// A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager
// (deployment, replicaset, garbage collector, namespace, serviceaccount, resourcequota, endpointslice controllers),
// kube-scheduler, and KWOK playing the kubelet for one fake node. More clusters (issue 33,
// docs/multi-cluster.md "Local stack") share the one etcd under their own `--etcd-prefix`, each with
// its own apiserver, kcm, scheduler, KWOK node, ServiceAccount keys, admin token and kubeconfig.
// Authentication: a static admin token (group system:masters) for the test harness and the
// control-plane components, and ServiceAccount tokens (signing key pair generated here at
// every start) for ModelDock itself — see install.ts. The apiserver serves a self-signed
// certificate it generates itself, whose CA the kubeconfig trusts. ServiceAccounts' requests
// are written to logs/audit.log (metadata only), so tests can see what the controller did.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.ts';
import { NODE_NET, REAL_NODE } from './node-config.ts';
import type { NodePki } from './node.ts';
import { startProcess, StackError, type ManagedProcess } from './proc.ts';

export interface ControlPlane {
  kubeconfig: string;
  server: string;
  /** The API server's certificate bundle (its self-signed leaf and CA). */
  caFile: string;
  processes: ManagedProcess[];
}

/** The stack's first control plane, with the etcd every further cluster shares. */
export interface FirstControlPlane extends ControlPlane {
  etcdUrl: string;
}

export const FAKE_NODE = 'kwok-node-0';
export const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** In the log dir: JSON lines of the requests ServiceAccounts made (metadata only; Deployment writes with their request bodies). */
export const AUDIT_LOG = 'audit.log';

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
# Deployment writes with their bodies: the autoscaling test reads the replicas each one set.
- level: Request
  userGroups: ["system:serviceaccounts"]
  resources: [{ group: "apps", resources: ["deployments"] }]
  verbs: ["create", "update", "patch"]
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`;

const stagesFile = fileURLToPath(new URL('./kwok-pod-stages.yaml', import.meta.url));

export interface ControlPlaneOptions {
  binDir: string;
  runDir: string;
  logDir: string;
  kcmArgs?: string[];
  /**
   * A real node joins (scripts/testenv/node.ts): the API server binds the host's end of the node's
   * veth instead of loopback (pods reach it through the `kubernetes` Service, whose endpoint it
   * then keeps), reaches the kubelet with a client certificate, accepts the node's token, and
   * kube-controller-manager publishes `kube-root-ca.crt` for in-cluster clients.
   */
  realNode?: NodePki;
}

/** etcd, then the first cluster on it (prefix `/registry`, files in the run dir itself). */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<FirstControlPlane> {
  const { binDir, runDir, logDir } = opts;
  rmSync(join(runDir, 'etcd'), { recursive: true, force: true });
  const [etcdPort, peerPort] = [await freePort(), await freePort()];
  const etcd = await startProcess(
    {
      name: 'etcd',
      command: join(binDir, 'etcd'),
      args: [
        '--name=n0',
        `--data-dir=${join(runDir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=n0=http://127.0.0.1:${peerPort}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      logDir,
      ready: async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok,
    },
    runDir,
  );
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  try {
    const cp = await startCluster({ ...opts, etcdUrl, dir: runDir });
    return { ...cp, etcdUrl, processes: [etcd, ...cp.processes] };
  } catch (err) {
    await etcd.stop();
    throw err;
  }
}

export interface ClusterOptions extends ControlPlaneOptions {
  etcdUrl: string;
  /** Where its pki, kubeconfig and KWOK stages go (the run dir for the first cluster). */
  dir: string;
  /**
   * A further cluster of the stack (issue 33): its name prefixes its processes and logs
   * (`c2-kube-apiserver.log`), its objects live under `/clusters/<name>/registry` in the shared
   * etcd, and its Go components run lean (one core each at most, no profiling, no compaction of the
   * shared etcd, fewer kcm workers), so three clusters fit on 2 cores.
   */
  further?: { name: string };
}

/** One cluster on a running etcd: kube-apiserver, kube-controller-manager, kube-scheduler and KWOK with its fake node. */
export async function startCluster(opts: ClusterOptions): Promise<ControlPlane> {
  const { binDir, runDir, logDir } = opts;
  const bin = (name: string) => join(binDir, name);
  const pki = join(opts.dir, 'pki');
  mkdirSync(pki, { recursive: true });
  const further = opts.further;
  const named = (component: string) => (further ? `${further.name}-${component}` : component);
  const lean = further ? { env: { GOMAXPROCS: '1' } } : {};

  const token = randomBytes(24).toString('hex');
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(pki, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(pki, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  const node = opts.realNode;
  const nodeToken = node ? `${node.token},system:node:${REAL_NODE},system:node:${REAL_NODE},"system:nodes"\n` : '';
  writeFileSync(join(pki, 'tokens.csv'), `${token},admin,admin,"system:masters"\n${nodeToken}`);
  const address = node ? NODE_NET.hostIp : '127.0.0.1';
  const auditPolicy = join(opts.dir, 'audit-policy.yaml');
  writeFileSync(auditPolicy, AUDIT_POLICY);

  const ports = await Promise.all(Array.from({ length: 4 }, () => freePort()));
  const [apiPort, kcmPort, schedPort, kwokPort] = ports as [number, number, number, number];
  const processes: ManagedProcess[] = [];
  const started = async (p: Promise<ManagedProcess>) => {
    processes.push(await p);
  };
  try {
    const certDir = join(pki, 'apiserver');
    const caFile = join(certDir, 'apiserver.crt'); // self-signed leaf followed by its CA
    const server = `https://${address}:${apiPort}`;
    await started(
      startProcess(
        {
          name: named('kube-apiserver'),
          command: bin('kube-apiserver'),
          ...lean,
          args: [
            `--etcd-servers=${opts.etcdUrl}`,
            ...(further ? [`--etcd-prefix=/clusters/${further.name}/registry`, '--etcd-compaction-interval=0', '--profiling=false'] : []),
            `--bind-address=${address}`,
            `--secure-port=${apiPort}`,
            `--advertise-address=${address}`,
            ...(node
              ? [
                  '--endpoint-reconciler-type=lease',
                  `--kubelet-client-certificate=${node.apiClientCert}`,
                  `--kubelet-client-key=${node.apiClientKey}`,
                  `--kubelet-certificate-authority=${node.ca}`,
                  '--kubelet-preferred-address-types=InternalIP',
                ]
              : ['--endpoint-reconciler-type=none']),
            `--cert-dir=${certDir}`,
            `--token-auth-file=${join(pki, 'tokens.csv')}`,
            `--service-account-issuer=${SA_ISSUER}`,
            `--api-audiences=${SA_ISSUER}`,
            `--service-account-key-file=${join(pki, 'sa.pub')}`,
            `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
            // Room for thousands of ClusterIP Services (bench B3 makes 1,200; a /24 holds 254).
            '--service-cluster-ip-range=10.0.0.0/16',
            '--authorization-mode=RBAC',
            '--allow-privileged=true',
            // blockOwnerDeletion needs update on the owner's finalizers (as on hardened clusters).
            // LimitRanger and ResourceQuota are on by default; named here so the stack states it.
            '--enable-admission-plugins=OwnerReferencesPermissionEnforcement,LimitRanger,ResourceQuota',
            `--audit-policy-file=${auditPolicy}`,
            `--audit-log-path=${join(logDir, further ? `${further.name}-${AUDIT_LOG}` : AUDIT_LOG)}`,
            '--audit-log-format=json',
            '--audit-log-mode=blocking',
            // No node-lifecycle controller runs, so nothing would lift the not-ready taint
            // this plugin puts on every new node; KWOK reports the node's readiness itself.
            '--disable-admission-plugins=TaintNodesByCondition',
          ],
          logDir,
          timeoutMs: 90_000,
          ready: async () => existsSync(caFile) && (await get(server, '/readyz', token, caFile)).status === 200,
        },
        runDir,
      ),
    );

    const kubeconfig = join(opts.dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml(server, caFile, token));

    // Both run without leader election, authenticate as the admin, and serve health on loopback.
    const shared = (port: number) => [
      '--leader-elect=false',
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--authentication-skip-lookup=true',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
    ];
    const components: Array<[string, string[], number]> = [
      [
        'kube-controller-manager',
        [
          // resourcequota-controller: usage of k8s/base/limits.yaml's ResourceQuota (its admission needs it);
          // endpointslice-controller: the Services' EndpointSlices, which readiness is taken from.
          `--controllers=deployment-controller,replicaset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,resourcequota-controller,endpointslice-controller${node ? ',root-ca-certificate-publisher-controller' : ''}`,
          // root-ca-certificate-publisher-controller: kube-root-ca.crt in every namespace, for in-cluster clients on the real node.
          ...(node ? [`--root-ca-file=${caFile}`] : []),
          ...shared(kcmPort),
          ...(further ? ['--concurrent-deployment-syncs=2', '--concurrent-replicaset-syncs=2', '--profiling=false'] : []),
          ...(opts.kcmArgs ?? []),
        ],
        kcmPort,
      ],
      ['kube-scheduler', [...shared(schedPort), ...(further ? ['--profiling=false'] : [])], schedPort],
    ];
    await Promise.all(
      components.map(([name, args, port]) =>
        started(
          startProcess(
            {
              name: named(name),
              command: bin(name),
              ...lean,
              args,
              logDir,
              ready: () => componentHealthy(port),
            },
            runDir,
          ),
        ),
      ),
    );

    const kwokConfig = join(opts.dir, 'kwok-stages.yaml');
    const nodeStages = ['node/fast/node-initialize.yaml', 'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml'];
    writeFileSync(
      kwokConfig,
      [...nodeStages.map((f) => readFileSync(join(binDir, 'stages', f), 'utf8')), readFileSync(stagesFile, 'utf8')].join('\n---\n'),
    );
    await started(
      startProcess(
        {
          name: named('kwok'),
          command: bin('kwok'),
          ...lean,
          args: [
            `--kubeconfig=${kubeconfig}`,
            `--config=${kwokConfig}`,
            // Only the fake node: a real node of the stack (scripts/testenv/node.ts) has a kubelet.
            '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
            '--node-lease-duration-seconds=40',
            `--server-address=127.0.0.1:${kwokPort}`,
          ],
          logDir,
          ready: async () => (await fetch(`http://127.0.0.1:${kwokPort}/healthz`)).ok,
        },
        runDir,
      ),
    );

    await createFakeNode(server, token, caFile);
    await waitFor(named('kwok'), logDir, 60_000, async () => {
      const res = await get(server, `/api/v1/nodes/${FAKE_NODE}`, token, caFile);
      const node = JSON.parse(res.body) as { status?: { conditions?: Array<{ type: string; status: string }> } };
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    });
    // The serviceaccount controller must have created `default` before pods can be admitted.
    await waitFor(named('kube-controller-manager'), logDir, 60_000, async () => {
      return (await get(server, '/api/v1/namespaces/default/serviceaccounts/default', token, caFile)).status === 200;
    });
    return { kubeconfig, server, caFile, processes };
  } catch (err) {
    await Promise.all(processes.map((p) => p.stop()));
    throw err;
  }
}

function kubeconfigYaml(server: string, caFile: string, token: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: modeldock-local
  cluster:
    server: ${server}
    certificate-authority: ${caFile}
users:
- name: admin
  user:
    token: ${token}
contexts:
- name: modeldock-local
  context:
    cluster: modeldock-local
    user: admin
current-context: modeldock-local
`;
}

async function createFakeNode(server: string, token: string, caFile: string): Promise<void> {
  const capacity = { cpu: '64', memory: '512Gi', pods: '500', 'nvidia.com/gpu': '16', 'ephemeral-storage': '2Ti' };
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: FAKE_NODE,
      labels: { 'kubernetes.io/hostname': FAKE_NODE, 'kubernetes.io/os': 'linux', type: 'kwok' },
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
    },
    status: { capacity, allocatable: capacity },
  };
  const res = await get(server, '/api/v1/nodes', token, caFile, 'POST', JSON.stringify(node));
  if (res.status !== 201 && res.status !== 409) {
    throw new StackError('kube-apiserver', `creating the fake node answered ${res.status}: ${res.body}`);
  }
}

/** Polls a start-up condition; on timeout the error names the last failed check, if it threw. */
async function waitFor(component: string, logDir: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'the check answered false';
  const ok = () =>
    check().catch((err: unknown) => {
      last = err instanceof Error ? err.message : String(err); // a component still starting refuses connections
      return false;
    });
  while (!(await ok())) {
    if (Date.now() > deadline) {
      const { tailFile } = await import('./proc.ts');
      throw new StackError(component, `condition not met within ${timeoutMs} ms (last: ${last})`, tailFile(join(logDir, `${component}.log`)));
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A control-plane component (kube-controller-manager, kube-scheduler) answers /healthz on its loopback port. */
export async function componentHealthy(port: number): Promise<boolean> {
  return (await get(`https://127.0.0.1:${port}`, '/healthz', undefined, undefined)).status === 200;
}

/** Minimal HTTPS client for start-up probes (before any kubeconfig-based client exists). */
function get(
  base: string,
  path: string,
  token: string | undefined,
  caFile: string | undefined,
  method = 'GET',
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      {
        method,
        ca: caFile ? readFileSync(caFile) : undefined,
        rejectUnauthorized: caFile !== undefined, // components' own self-signed health ports
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(body ? { 'Content-Type': 'application/json' } : {}),
        },
        timeout: 3000,
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}
