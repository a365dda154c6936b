// The real node's configuration files, as pure functions of its layout (scripts/testenv/node.ts
// writes them). Every path is under the node's own directory; every address is on the node's own
// network namespace (NODE_NET). Why each setting: docs/local-stack.md, "The real node".

/** The node's network: a namespace of its own, joined to the host by a veth pair. */
export const NODE_NET = {
  /** The network namespace the node's containerd, kubelet, kube-proxy, bridge and pods live in. */
  netns: 'modeldock-node',
  /** The veth pair: the host's end and the namespace's end, a /30 of their own. */
  hostIf: 'mdnode-host',
  nsIf: 'mdnode-ns',
  hostIp: '10.243.255.1',
  nsIp: '10.243.255.2',
  linkPrefix: 30,
  /** The pods' bridge inside the namespace; its address is the node IP and the pods' gateway. */
  bridge: 'mdnode0',
  podCidr: '10.244.0.0/24',
  bridgeIp: '10.244.0.1',
  /** The stack's Service range (kube-apiserver --service-cluster-ip-range). */
  serviceCidr: '10.0.0.0/16',
} as const;

export const REAL_NODE = 'md-node-0';
/** Label and taint of the real node: only pods that opt in (placement settings) land on it. */
export const REAL_NODE_LABEL = 'modeldock.io/real-node';
/** The operator's placement settings (controller/README.md, "Placement") that put tenant pods on the real node. */
export const REAL_NODE_PLACEMENT: Readonly<Record<string, string>> = {
  POD_NODE_SELECTOR: JSON.stringify({ [REAL_NODE_LABEL]: 'true' }),
  POD_TOLERATIONS: JSON.stringify([{ key: REAL_NODE_LABEL, operator: 'Equal', value: 'true', effect: 'NoSchedule' }]),
};
/** The sandbox image, imported into containerd (never pulled). */
export const PAUSE_IMAGE = 'localhost/modeldock/pause:3.10';
/** The kubelet's cgroup root: a subtree of its own in every hierarchy, removed at teardown. */
export const CGROUP_ROOT = 'modeldock-node';

export interface NodeLayout {
  /** <runDir>/node */
  dir: string;
  binDir: string;
  /** host:port of the loopback-side registry that docker.io names resolve to (http). */
  registry: string;
  apiServer: string;
  /** The apiserver's CA bundle. */
  apiCa: string;
  nodeToken: string;
  /** The node PKI: CA, kubelet serving certificate. */
  pki: { ca: string; kubeletCert: string; kubeletKey: string };
}

export const nodePaths = (dir: string) => ({
  containerdRoot: `${dir}/containerd/root`,
  containerdState: `${dir}/containerd/state`,
  containerdSock: `${dir}/containerd/containerd.sock`,
  containerdConfig: `${dir}/containerd/config.toml`,
  certsD: `${dir}/containerd/certs.d`,
  runcRoot: `${dir}/containerd/runc`,
  cniConf: `${dir}/cni/net.d`,
  cniIpam: `${dir}/cni/ipam`,
  cniCache: `${dir}/cni/cache`,
  kubeletRoot: `${dir}/kubelet`,
  kubeletConfig: `${dir}/kubelet-config.yaml`,
  kubeconfig: `${dir}/node.kubeconfig`,
  podLogs: `${dir}/pod-logs`,
  sysctlShadow: `${dir}/sysctl-shadow`,
  proxyConfig: `${dir}/kube-proxy-config.yaml`,
  kubeRouterKubeconfig: `${dir}/kube-router.kubeconfig`,
  /** The lock iptables takes (legacy backend), under the node dir instead of the host's /run/xtables.lock. */
  xtablesLock: `${dir}/xtables.lock`,
});

export function containerdConfig(l: NodeLayout): string {
  const p = nodePaths(l.dir);
  return `# Written by scripts/testenv/node.ts (ModelDock's real node).
version = 3
root = "${p.containerdRoot}"
state = "${p.containerdState}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.nri.v1.nri"]

[grpc]
  address = "${p.containerdSock}"

[ttrpc]
  address = "${p.containerdSock}.ttrpc"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "${PAUSE_IMAGE}"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "${p.certsD}"

[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  # Root on these VMs lacks CAP_SYS_RESOURCE: a negative oom_score_adj (sandbox -998, Guaranteed
  # containers -997) is refused, so every value is clamped to containerd's own.
  restrict_oom_score_adj = true
  # Pod network namespaces under the state dir, not /var/run/netns.
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "/usr/sbin/runc"
        Root = "${p.runcRoot}"
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "${p.cniConf}"
    max_conf_num = 1

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
`;
}

/** docker.io names (what a tenant writes: `modeldock/mock-model:0.1.0`) resolve to the loopback registry only, never upstream. */
export function dockerIoHosts(registry: string): string {
  return `server = "http://${registry}"

[host."http://${registry}"]
  capabilities = ["pull", "resolve"]
`;
}

/**
 * The pods' network: the bridge (created with its address by node.ts, so the node IP exists before
 * the kubelet starts) as every pod's gateway, inside the node's namespace, so the forwarding it
 * turns on is the namespace's, never the host's.
 */
export function cniConflist(l: NodeLayout): string {
  const p = nodePaths(l.dir);
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'modeldock-pods',
      plugins: [
        {
          type: 'bridge',
          bridge: NODE_NET.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: p.cniIpam,
            ranges: [[{ subnet: NODE_NET.podCidr, rangeStart: '10.244.0.10', rangeEnd: '10.244.0.250', gateway: NODE_NET.bridgeIp }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  );
}

export function kubeletConfig(l: NodeLayout): string {
  const p = nodePaths(l.dir);
  return `# Written by scripts/testenv/node.ts (ModelDock's real node).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false            # the machine's cgroup v1 hierarchy (deprecated, still supported by 1.36)
cgroupDriver: cgroupfs         # PID 1 is not systemd
cgroupRoot: /${CGROUP_ROOT}     # a subtree of its own, removed at teardown
containerRuntimeEndpoint: unix://${p.containerdSock}
address: ${NODE_NET.bridgeIp}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: ${l.pki.kubeletCert}
tlsPrivateKeyFile: ${l.pki.kubeletKey}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${l.pki.ca}}
authorization:
  mode: Webhook
makeIPTablesUtilChains: false
registerWithTaints:
- {key: ${REAL_NODE_LABEL}, value: "true", effect: NoSchedule}
podLogsDir: ${p.podLogs}
resolvConf: ""
clusterDomain: cluster.local
maxPods: 30
serializeImagePulls: false
# No pull secrets exist here; without it the kubelet refuses a present image pulled under another name.
imagePullCredentialsVerificationPolicy: NeverVerify
# Short periods, so a test sees a crash, a restart and a status change within seconds.
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
evictionHard: {memory.available: 100Mi}
`;
}

export function nodeKubeconfig(l: NodeLayout): string {
  return kubeconfigFor(l, REAL_NODE, l.nodeToken, 'node');
}

export function kubeProxyConfig(l: NodeLayout): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection:
  kubeconfig: ${nodePaths(l.dir).kubeconfig}
hostnameOverride: ${REAL_NODE}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: ${NODE_NET.podCidr}
detectLocalMode: ClusterCIDR
nodePortAddresses: ["${NODE_NET.bridgeIp}/32"]
nftables:
  # A pod that calls a Service backed by a pod on the same bridge gets its answer back through
  # the namespace's conntrack (no bridge netfilter needed).
  masqueradeAll: true
# conntrack sysctls are the host's: leave them alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
`;
}

/**
 * The sysctls the kubelet rewrites at start (vm.overcommit_memory=1, vm.panic_on_oom=0,
 * kernel.panic=10, kernel.panic_on_oops=1, kernel.keys.root_max*): in the kubelet's own mount
 * namespace each is a file of ours bound over /proc/sys, so the host's stay as they are.
 */
export const KUBELET_SYSCTLS = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
] as const;

/** The kubelet's wrapper: the node namespace's network, a private mount namespace with the sysctls shadowed. */
export function kubeletWrapper(l: NodeLayout): string {
  const p = nodePaths(l.dir);
  const shadows = KUBELET_SYSCTLS.map((f) => {
    const s = `${p.sysctlShadow}/${f.replace(/\//g, '_')}`;
    return `cat /proc/sys/${f} > '${s}'\nmount --bind '${s}' /proc/sys/${f}`;
  }).join('\n');
  return `#!/bin/bash
# Written by scripts/testenv/node.ts. Runs in the node's network namespace (nsenter) and a mount
# namespace of its own (unshare), where the kernel sysctls the kubelet writes are shadowed.
set -euo pipefail
mkdir -p '${p.sysctlShadow}'
${shadows}
exec '${l.binDir}/kubelet' "$@"
`;
}

/**
 * The NetworkPolicy enforcer's identity: a ServiceAccount of its own that may only read what
 * kube-router's informers watch (it starts informers for all of these, and waits for every one
 * to sync), nothing else and no writes.
 */
export const KUBE_ROUTER_SA = { namespace: 'kube-system', name: 'modeldock-kube-router' } as const;

export function kubeRouterRbac(): string {
  const { namespace, name } = KUBE_ROUTER_SA;
  return `apiVersion: v1
kind: ServiceAccount
metadata: {name: ${name}, namespace: ${namespace}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${name}}
rules:
- {apiGroups: [""], resources: [namespaces, pods, services, endpoints, nodes], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${name}}
subjects: [{kind: ServiceAccount, name: ${name}, namespace: ${namespace}}]
`;
}

export function kubeRouterKubeconfig(l: NodeLayout, token: string): string {
  return kubeconfigFor(l, KUBE_ROUTER_SA.name, token, 'kube-router');
}

/** A kubeconfig for the stack's API server authenticating `user` with a bearer token. */
function kubeconfigFor(l: NodeLayout, user: string, token: string, context: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: modeldock-local
  cluster: {server: "${l.apiServer}", certificate-authority: "${l.apiCa}"}
users:
- name: ${user}
  user: {token: "${token}"}
contexts:
- name: ${context}
  context: {cluster: modeldock-local, user: ${user}}
current-context: ${context}
`;
}

/**
 * kube-router with its NetworkPolicy controller only (iptables + ipset, in the node's network
 * namespace): no routing, no Service proxy (kube-proxy's), no load balancer, no CNI config (the
 * bridge plugin's), IPv4 only, no health or metrics listener. Why these: docs/local-stack.md.
 */
export function kubeRouterArgs(l: NodeLayout): string[] {
  return [
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    '--run-loadbalancer=false',
    '--enable-cni=false',
    '--enable-ipv4=true',
    '--enable-ipv6=false',
    `--service-cluster-ip-range=${NODE_NET.serviceCidr}`,
    '--health-port=0',
    '--metrics-port=0',
    `--hostname-override=${REAL_NODE}`,
    `--kubeconfig=${nodePaths(l.dir).kubeRouterKubeconfig}`,
    '--v=1',
  ];
}

/**
 * The tenant network settings (controller env, docs/tenancy.md) of a controller whose tenant pods
 * run on the real node: connections from the host's end of the veth — where the tests, `npm run dev`
 * and a gateway outside the cluster connect from — are let into tenant pods; everything else the
 * tenant namespaces' NetworkPolicies deny stays denied.
 */
export const REAL_NODE_TENANT_NETWORK: Readonly<Record<string, string>> = { TENANT_INGRESS_CIDRS: `${NODE_NET.hostIp}/32` };
