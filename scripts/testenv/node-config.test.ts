import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { cniConflist, containerdConfig, dockerIoHosts, kubeletConfig, kubeletWrapper, kubeProxyConfig, kubeRouterArgs, kubeRouterKubeconfig, kubeRouterRbac, KUBELET_SYSCTLS, NODE_NET, type NodeLayout } from './node-config.ts';

const layout: NodeLayout = {
  dir: '/run dir/node',
  binDir: '/bin dir',
  registry: '10.243.255.1:5123',
  apiServer: 'https://10.243.255.1:6443',
  apiCa: '/run dir/pki/apiserver/apiserver.crt',
  nodeToken: 'tok',
  pki: { ca: '/run dir/node/pki/ca.crt', kubeletCert: '/run dir/node/pki/kubelet.crt', kubeletKey: '/run dir/node/pki/kubelet.key' },
};

describe('the real node configuration', () => {
  it('keeps the kubelet off the host: cgroup root of its own, no iptables chains, no host resolver, its own paths', () => {
    const c = parse(kubeletConfig(layout)) as Record<string, unknown>;
    expect(c).toMatchObject({ failCgroupV1: false, cgroupDriver: 'cgroupfs', cgroupRoot: '/modeldock-node', makeIPTablesUtilChains: false, resolvConf: '', address: NODE_NET.bridgeIp, readOnlyPort: 0 });
    expect(c.authentication).toEqual({ anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: layout.pki.ca } });
    expect(c.containerRuntimeEndpoint).toBe('unix:///run dir/node/containerd/containerd.sock');
    expect(c.registerWithTaints).toEqual([{ key: 'modeldock.io/real-node', value: 'true', effect: 'NoSchedule' }]);
  });

  it('containerd: everything under the node dir, oom_score_adj clamped, pod netns under its state dir, no upstream for docker.io', () => {
    const toml = containerdConfig(layout);
    for (const key of ['root = "/run dir/node/containerd/root"', 'state = "/run dir/node/containerd/state"', 'restrict_oom_score_adj = true', 'netns_mounts_under_state_dir = true', 'sandbox = "localhost/modeldock/pause:3.10"']) {
      expect(toml).toContain(key);
    }
    expect(dockerIoHosts(layout.registry)).toBe('server = "http://10.243.255.1:5123"\n\n[host."http://10.243.255.1:5123"]\n  capabilities = ["pull", "resolve"]\n');
  });

  it('pods: the bridge inside the namespace is their gateway, no masquerade towards the host', () => {
    const c = JSON.parse(cniConflist(layout)) as { plugins: Array<Record<string, unknown>> };
    expect(c.plugins[0]).toMatchObject({ type: 'bridge', bridge: NODE_NET.bridge, isGateway: true, ipMasq: false });
    expect(JSON.stringify(c.plugins[0]!.ipam)).toContain(NODE_NET.podCidr);
  });

  it('kube-proxy: nftables in the namespace, node ports on the node IP only, conntrack sysctls untouched', () => {
    const c = parse(kubeProxyConfig(layout)) as Record<string, unknown>;
    expect(c).toMatchObject({ mode: 'nftables', nodePortAddresses: [`${NODE_NET.bridgeIp}/32`], conntrack: { maxPerCore: 0, min: 0 } });
  });

  it('the kubelet wrapper shadows every sysctl the kubelet writes', () => {
    const sh = kubeletWrapper(layout);
    for (const s of KUBELET_SYSCTLS) expect(sh).toContain(`mount --bind '/run dir/node/sysctl-shadow/${s.replace(/\//g, '_')}' /proc/sys/${s}`);
    expect(sh).toContain(`exec '/bin dir/kubelet' "$@"`);
  });

  it('kube-router: the policy controller alone, IPv4, no listener, the stack’s Service range, its own kubeconfig', () => {
    expect(kubeRouterArgs(layout)).toEqual([
      '--run-firewall=true',
      '--run-router=false',
      '--run-service-proxy=false',
      '--run-loadbalancer=false',
      '--enable-cni=false',
      '--enable-ipv4=true',
      '--enable-ipv6=false',
      '--service-cluster-ip-range=10.0.0.0/16',
      '--health-port=0',
      '--metrics-port=0',
      '--hostname-override=md-node-0',
      '--kubeconfig=/run dir/node/kube-router.kubeconfig',
      '--v=1',
    ]);
    const kc = parse(kubeRouterKubeconfig(layout, 'sa-token')) as { clusters: Array<{ cluster: Record<string, string> }>; users: Array<{ user: Record<string, string> }> };
    expect(kc.clusters[0]!.cluster).toEqual({ server: layout.apiServer, 'certificate-authority': layout.apiCa });
    expect(kc.users[0]!.user).toEqual({ token: 'sa-token' });
  });

  it('kube-router’s ServiceAccount may only read what its informers watch', () => {
    const docs = parseAllDocuments(kubeRouterRbac()).map((d) => d.toJS() as { kind: string; rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>; subjects?: unknown[] });
    expect(docs.map((d) => d.kind)).toEqual(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
    const rules = docs[1]!.rules!;
    expect(rules.flatMap((r) => r.verbs).every((v) => ['get', 'list', 'watch'].includes(v))).toBe(true);
    expect(rules.flatMap((r) => r.resources).sort()).toEqual(['endpoints', 'endpointslices', 'namespaces', 'networkpolicies', 'nodes', 'pods', 'services']);
    expect(docs[2]!.subjects).toEqual([{ kind: 'ServiceAccount', name: 'modeldock-kube-router', namespace: 'kube-system' }]);
  });
});
