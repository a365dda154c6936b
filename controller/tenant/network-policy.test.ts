import { describe, expect, it } from 'vitest';
import { cidrContains, DNS_PEER, egressBlocks, METADATA_CIDR, parseCidr, POLICY_NAMES, tenantNetworkPolicies, type NetworkPolicy, type TenantNetworkSettings } from './network-policy.ts';

const settings = (over: Partial<TenantNetworkSettings> = {}): TenantNetworkSettings => ({
  gatewayNamespaceLabels: { 'modeldock.io/gateway': 'true' },
  gatewayPodLabels: { 'app.kubernetes.io/name': 'modeldock-gateway' },
  controllerNamespaceLabels: { 'kubernetes.io/metadata.name': 'modeldock-system' },
  controllerPodLabels: { 'app.kubernetes.io/name': 'modeldock-controller' },
  ingressCidrs: [],
  egressAllow: [],
  egressDeny: [],
  ...over,
});
const byName = (ps: NetworkPolicy[], name: string) => ps.find((p) => p.metadata.name === name)!;
const gatewayPeer = { namespaceSelector: { matchLabels: { 'modeldock.io/gateway': 'true' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'modeldock-gateway' } } };
const controllerPeer = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'modeldock-system' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'modeldock-controller' } } };
const dnsRule = { to: [DNS_PEER], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] };

describe('the NetworkPolicies of a tenant namespace', () => {
  it('three policies, named modeldock-*, in the namespace, labelled managed-by=modeldock, selecting every pod', () => {
    const ps = tenantNetworkPolicies('md-acme', settings());
    expect(ps.map((p) => p.metadata.name)).toEqual(['modeldock-default-deny', 'modeldock-ingress', 'modeldock-egress']);
    for (const p of ps) {
      expect(p).toMatchObject({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { namespace: 'md-acme', labels: { 'app.kubernetes.io/managed-by': 'modeldock' } } });
      expect(p.spec.podSelector).toEqual({});
    }
  });

  it('the default deny isolates both ways and admits nothing', () => {
    const p = byName(tenantNetworkPolicies('t', settings({ ingressCidrs: ['10.1.0.0/16'], egressAllow: ['0.0.0.0/0'] })), POLICY_NAMES.defaultDeny);
    expect(p.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  });

  it.each<[string, Partial<TenantNetworkSettings>, unknown[]]>([
    ['the gateway’s pods in the gateway namespaces, the controller’s pods in its namespace (one peer each: both selectors)', {}, [gatewayPeer, controllerPeer]],
    [
      'other gateway labels',
      { gatewayNamespaceLabels: { team: 'edge', tier: 'gw' }, gatewayPodLabels: { app: 'gw' } },
      [{ namespaceSelector: { matchLabels: { team: 'edge', tier: 'gw' } }, podSelector: { matchLabels: { app: 'gw' } } }, controllerPeer],
    ],
    [
      'other controller labels',
      { controllerNamespaceLabels: { 'kubernetes.io/metadata.name': 'ops' }, controllerPodLabels: { app: 'ctl', tier: 'control' } },
      [gatewayPeer, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops' } }, podSelector: { matchLabels: { app: 'ctl', tier: 'control' } } }],
    ],
    ['no controller peer without its settings (a controller outside the cluster comes in through a CIDR)', { controllerNamespaceLabels: undefined, controllerPodLabels: undefined }, [gatewayPeer]],
    ['never the controller’s whole namespace: no pod labels, no peer', { controllerPodLabels: undefined }, [gatewayPeer]],
    ['never the controller’s pods in every namespace: no namespace labels, no peer', { controllerNamespaceLabels: undefined }, [gatewayPeer]],
    ['empty label sets select everything: no peer', { controllerNamespaceLabels: {}, controllerPodLabels: {} }, [gatewayPeer]],
    ['empty pod labels alone: no peer', { controllerPodLabels: {} }, [gatewayPeer]],
    [
      'and the ingress CIDRs, each once',
      { ingressCidrs: ['10.243.255.1/32', '192.0.2.0/24', '10.243.255.1/32'] },
      [gatewayPeer, controllerPeer, { ipBlock: { cidr: '10.243.255.1/32' } }, { ipBlock: { cidr: '192.0.2.0/24' } }],
    ],
  ])('ingress: %s', (_n, over, from) => {
    const p = byName(tenantNetworkPolicies('t', settings(over)), POLICY_NAMES.ingress);
    expect(p.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'], ingress: [{ from }] });
  });

  it('the gateway and controller labels are copied, not shared with the settings', () => {
    const s = settings();
    const p = byName(tenantNetworkPolicies('t', s), POLICY_NAMES.ingress);
    for (const peer of p.spec.ingress![0]!.from.slice(0, 2)) {
      peer.namespaceSelector!.matchLabels!.x = 'y';
      peer.podSelector!.matchLabels!.x = 'y';
    }
    expect(s).toEqual(settings());
  });

  it.each<[string, Partial<TenantNetworkSettings>, unknown[]]>([
    ['no allow list: DNS only', { egressDeny: ['10.0.0.0/16'] }, [dnsRule]],
    [
      'the whole internet minus the metadata range and the cluster’s ranges',
      { egressAllow: ['0.0.0.0/0'], egressDeny: ['10.244.0.0/24', '10.0.0.0/16', '10.243.255.0/30'] },
      [dnsRule, { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: [METADATA_CIDR, '10.244.0.0/24', '10.0.0.0/16', '10.243.255.0/30'] } }] }],
    ],
    [
      'each allowed CIDR excepts only the denied CIDRs inside it',
      { egressAllow: ['192.0.2.0/24', '10.0.0.0/8', '169.254.0.0/17'], egressDeny: ['10.0.0.0/16', '192.0.2.128/25'] },
      [dnsRule, { to: [{ ipBlock: { cidr: '192.0.2.0/24', except: ['192.0.2.128/25'] } }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.0.0.0/16'] } }] }],
    ],
    ['an allowed CIDR equal to a denied one is left out (an except must be strictly inside)', { egressAllow: ['10.0.0.0/16', '192.0.2.10/32'], egressDeny: ['10.0.0.0/16'] }, [dnsRule, { to: [{ ipBlock: { cidr: '192.0.2.10/32' } }] }]],
    ['the metadata address itself, allow-listed, is never reachable', { egressAllow: ['169.254.169.254/32'] }, [dnsRule]],
  ])('egress: %s', (_n, over, egress) => {
    const p = byName(tenantNetworkPolicies('t', settings(over)), POLICY_NAMES.egress);
    expect(p.spec).toEqual({ podSelector: {}, policyTypes: ['Egress'], egress });
  });
});

describe('egressBlocks', () => {
  it.each<[string, string[], string[], Array<{ cidr: string; except?: string[] }>]>([
    ['nothing allowed', [], ['10.0.0.0/8'], []],
    ['outside every denied CIDR: no except', ['192.0.2.0/24'], ['10.0.0.0/8'], [{ cidr: '192.0.2.0/24' }]],
    ['an except inside another except is dropped', ['10.0.0.0/8'], ['10.1.0.0/16', '10.1.2.0/24'], [{ cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] }]],
    ['duplicates once', ['10.0.0.0/8', '10.0.0.0/8'], ['10.1.0.0/16', '10.1.0.0/16'], [{ cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] }]],
    ['a denied range larger than the allowed one removes it', ['10.1.2.0/24'], ['10.0.0.0/8'], []],
    ['the metadata range is denied without being listed', ['169.0.0.0/8'], [], [{ cidr: '169.0.0.0/8', except: [METADATA_CIDR] }]],
  ])('%s', (_n, allow, deny, want) => {
    expect(egressBlocks(allow, deny)).toEqual(want);
  });
});

describe('CIDRs', () => {
  it.each<[string, string, boolean]>([
    ['0.0.0.0/0', '169.254.169.254/32', true],
    ['10.0.0.0/16', '10.0.0.0/16', true],
    ['10.0.0.0/16', '10.0.255.255/32', true],
    ['10.0.0.0/16', '10.1.0.0/32', false],
    ['10.0.0.0/16', '10.0.0.0/8', false],
    ['10.243.255.0/30', '10.243.255.1/32', true],
    ['10.243.255.0/30', '10.243.255.4/32', false],
    ['192.0.2.128/25', '192.0.2.0/24', false],
    ['255.255.255.255/32', '255.255.255.255/32', true],
  ])('%s contains %s: %s', (outer, inner, want) => {
    expect(cidrContains(outer, inner)).toBe(want);
  });

  it('reads the network of a CIDR with host bits set', () => {
    expect(parseCidr('10.243.255.1/30')).toEqual({ base: parseCidr('10.243.255.0/30').base, prefix: 30 });
    expect(parseCidr('255.255.255.255/0')).toEqual({ base: 0, prefix: 0 });
  });

  it.each(['10.0.0.0', '10.0.0.256/8', '10.0.0.0/33', 'fd00::/8', '', ' 10.0.0.0/8'])('%j is refused', (c) => {
    expect(() => parseCidr(c)).toThrow(/is not an IPv4 CIDR/);
  });
});
