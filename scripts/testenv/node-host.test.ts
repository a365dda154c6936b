import { describe, expect, it } from 'vitest';
import { diffHostState, type HostState } from './node-host.ts';

const host: HostState = {
  sysctls: { 'net/ipv4/ip_forward': '0', 'kernel/panic_on_oops': '0' },
  routes: 'default via 192.0.2.1 dev eth0\n',
  links: ['lo', 'eth0'],
  nftables: '',
  mounts: ['/proc', '/run'],
  cgroups: ['memory/system.slice'],
  paths: [],
};

describe('diffHostState', () => {
  it('the same reading: no difference', () => {
    expect(diffHostState(host, structuredClone(host))).toEqual([]);
  });

  it.each<[string, Partial<HostState>, RegExp]>([
    ['a sysctl turned on', { sysctls: { ...host.sysctls, 'net/ipv4/ip_forward': '1' } }, /^sysctl net\/ipv4\/ip_forward: 0 → 1$/],
    ['a sysctl that appeared', { sysctls: { ...host.sysctls, 'net/bridge/bridge-nf-call-iptables': '1' } }, /bridge-nf-call-iptables: \(absent\) → 1/],
    ['a route left behind', { routes: `${host.routes}10.244.0.0/24 via 10.243.255.2 dev mdnode-host\n` }, /^routes changed/],
    ['a link left behind', { links: [...host.links, 'mdnode-host'] }, /^link added: mdnode-host$/],
    ['a mount left behind', { mounts: [...host.mounts, '/tmp/x/node/kubelet'] }, /^mount added: \/tmp\/x\/node\/kubelet$/],
    ['a cgroup left behind', { cgroups: [...host.cgroups, 'memory/modeldock-node'] }, /^cgroup added: memory\/modeldock-node$/],
    ['a cgroup removed', { cgroups: [] }, /^cgroup removed: memory\/system.slice$/],
    ['a stray path written', { paths: ['/var/lib/kubelet'] }, /^path added: \/var\/lib\/kubelet$/],
    ['nftables rules left behind', { nftables: 'table ip kube-proxy {}\n' }, /^nftables ruleset changed/],
  ])('%s is reported', (_, change, line) => {
    const diff = diffHostState(host, { ...host, ...change });
    expect(diff).toHaveLength(1);
    expect(diff[0]).toMatch(line);
  });
});
