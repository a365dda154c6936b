// The NetworkPolicies of a tenant namespace: PURE functions of the namespace and the operator's
// network settings (network-settings.ts parses them from the controller's env). Every pod of the
// namespace is isolated both ways; it accepts connections only from the gateway's pods (in the
// gateway's namespaces), the controller's own pods (in the controller's namespace) and the
// operator's ingress CIDRs, and opens them only to the cluster DNS and to the operator's allow
// list minus the deny list (the metadata range 169.254.0.0/16 always, and the cluster's own
// ranges: pods, Services, nodes, the API server). So a tenant reaches neither another tenant, nor
// the controller, nor the API server, nor a cloud's metadata service.
//
// The controller's peer is there because its autoscaler reads every ready tenant pod's /metrics
// (controller/autoscale/scrape.ts). It is admitted like the gateway, on every port: a peer cannot
// be narrowed to the pods' own ports, which vary per admission while the policy is one per
// namespace. Both of its selectors are set together or the peer is left out (never a whole
// namespace); without it, a controller outside the cluster reaches the pods through the ingress
// CIDRs (the local stack's host end).
//
// Three policies with fixed names whatever the settings, each with a non-empty rule list: the
// controller writes them with a JSON merge patch, which replaces a list whole but leaves a field
// it does not name, so a rule removed from the settings must be a shorter list, never a missing one.
import { LABELS, MANAGED_BY } from '../../schema/model-service.ts';
import type { KubeObject } from '../runtime/informer.ts';

export interface TenantNetworkSettings {
  /** matchLabels of the namespaces whose gateway pods may connect to tenant pods. */
  gatewayNamespaceLabels: Record<string, string>;
  /** matchLabels of the gateway's pods in those namespaces: no other pod there may connect. */
  gatewayPodLabels: Record<string, string>;
  /**
   * matchLabels of the controller's namespace, whose controller pods may connect to tenant pods (its
   * autoscaler reads their /metrics). Set with controllerPodLabels or not at all: either alone adds no peer.
   */
  controllerNamespaceLabels?: Record<string, string>;
  /** matchLabels of the controller's own pods in that namespace: no other pod there may connect. */
  controllerPodLabels?: Record<string, string>;
  /** CIDRs outside the cluster that may connect to tenant pods (e.g. a gateway running outside, the stack's host end 10.243.255.1/32). */
  ingressCidrs: string[];
  /** CIDRs tenant pods may reach besides DNS (the operator's allow list). */
  egressAllow: string[];
  /** Never reachable even inside an allowed CIDR: always 169.254.0.0/16, plus the operator's cluster ranges (pod, Service, node addresses, API server). */
  egressDeny: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
}
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
export interface NetworkPolicyPort {
  protocol: 'TCP' | 'UDP';
  port: number;
}
export type NetworkPolicy = KubeObject & {
  spec: {
    podSelector: LabelSelector;
    policyTypes: Array<'Ingress' | 'Egress'>;
    ingress?: Array<{ from: NetworkPolicyPeer[] }>;
    egress?: Array<{ to: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }>;
  };
};

/** Link-local: cloud metadata services (169.254.169.254) and the like. Denied whatever the settings say. */
export const METADATA_CIDR = '169.254.0.0/16';
export const POLICY_NAMES = { defaultDeny: 'modeldock-default-deny', ingress: 'modeldock-ingress', egress: 'modeldock-egress' } as const;
/** The cluster DNS, as kubeadm and most distributions label it. */
export const DNS_PEER: NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
  podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
};
const DNS_PORTS: NetworkPolicyPort[] = [
  { protocol: 'UDP', port: 53 },
  { protocol: 'TCP', port: 53 },
];

/** `labels`: what the policies carry (the controller gives them the tenant namespace's, tenant/namespace.ts tenantLabels). */
export function tenantNetworkPolicies(namespace: string, s: TenantNetworkSettings, labels: Record<string, string> = { [LABELS.managedBy]: MANAGED_BY }): NetworkPolicy[] {
  const policy = (name: string, spec: NetworkPolicy['spec']): NetworkPolicy => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace, labels: { ...labels } },
    spec,
  });
  const everyPod: LabelSelector = {};
  const allowed = egressBlocks(s.egressAllow, s.egressDeny);
  return [
    policy(POLICY_NAMES.defaultDeny, { podSelector: everyPod, policyTypes: ['Ingress', 'Egress'] }),
    policy(POLICY_NAMES.ingress, {
      podSelector: everyPod,
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { ...s.gatewayNamespaceLabels } }, podSelector: { matchLabels: { ...s.gatewayPodLabels } } },
            ...controllerPeers(s),
            ...unique(s.ingressCidrs).map((cidr) => ({ ipBlock: { cidr } })),
          ],
        },
      ],
    }),
    policy(POLICY_NAMES.egress, {
      podSelector: everyPod,
      policyTypes: ['Egress'],
      egress: [{ to: [DNS_PEER], ports: DNS_PORTS }, ...(allowed.length ? [{ to: allowed.map((ipBlock) => ({ ipBlock })) }] : [])],
    }),
  ];
}

/** The controller's pods in its namespace: one peer with both selectors, or none when either is missing or empty. */
function controllerPeers(s: TenantNetworkSettings): NetworkPolicyPeer[] {
  const ns = s.controllerNamespaceLabels;
  const pods = s.controllerPodLabels;
  if (!ns || !pods || !Object.keys(ns).length || !Object.keys(pods).length) return [];
  return [{ namespaceSelector: { matchLabels: { ...ns } }, podSelector: { matchLabels: { ...pods } } }];
}

/**
 * One ipBlock per allowed CIDR, its `except` every denied CIDR strictly inside it (the API server
 * refuses an except outside its cidr, or equal to it). An allowed CIDR that a denied one covers
 * is left out: nothing of it is reachable.
 */
export function egressBlocks(allow: string[], deny: string[]): Array<{ cidr: string; except?: string[] }> {
  const denied = unique([METADATA_CIDR, ...deny]);
  const out: Array<{ cidr: string; except?: string[] }> = [];
  for (const cidr of unique(allow)) {
    if (denied.some((d) => cidrContains(d, cidr))) continue;
    const inside = denied.filter((d) => cidrContains(cidr, d));
    // An except inside another except adds nothing.
    const except = inside.filter((d) => !inside.some((o) => o !== d && cidrContains(o, d)));
    out.push(except.length ? { cidr, except } : { cidr });
  }
  return out;
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/** An IPv4 CIDR as its first address (a 32-bit number) and prefix length. */
export interface Cidr {
  base: number;
  prefix: number;
}

const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** Parses an IPv4 CIDR; host bits are ignored (10.0.0.1/8 is 10.0.0.0/8). Throws on anything else. */
export function parseCidr(cidr: string): Cidr {
  const m = IPV4_CIDR.exec(cidr);
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = Number(m?.[5]);
  if (!m || octets.some((o) => o > 255) || prefix > 32) throw new Error(`"${cidr}" is not an IPv4 CIDR such as 10.0.0.0/8`);
  const addr = octets.reduce((a, o) => a * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  return { base: addr - (addr % size), prefix };
}

/** Does `outer` contain every address of `inner` (a CIDR contains itself)? */
export function cidrContains(outer: string, inner: string): boolean {
  const o = parseCidr(outer);
  const i = parseCidr(inner);
  if (i.prefix < o.prefix) return false;
  const size = 2 ** (32 - o.prefix);
  return i.base - (i.base % size) === o.base;
}
