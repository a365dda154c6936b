// The operator's network settings of tenant namespaces (controller env, controller/main.ts), parsed
// and checked at start: a wrong CIDR or label exits with the reason instead of opening or closing
// tenants' traffic by surprise. What they become: network-policy.ts.
import { z } from 'zod';
import { jsonSetting, labelKey, labelValue } from '../../schema/placement.ts';
import { parseCidr, type Cidr, type TenantNetworkSettings } from './network-policy.ts';

/** The gateway namespaces' label by default (k8s/base/network-policy.yaml's convention). */
export const DEFAULT_GATEWAY_NAMESPACE_LABELS: Readonly<Record<string, string>> = { 'modeldock.io/gateway': 'true' };
/** The gateway's pods by default (k8s/base/gateway.yaml). */
export const DEFAULT_GATEWAY_POD_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/name': 'modeldock-gateway' };
/**
 * The controller's pods by default: the pod template label of k8s/base/controller.yaml, its
 * Deployment's selector (the gateway and the monitoring carry names of their own).
 */
export const DEFAULT_CONTROLLER_POD_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/name': 'modeldock-controller' };
/** The controller's namespace by default: the name label the API server puts on every namespace. */
export const defaultControllerNamespaceLabels = (namespace: string): Record<string, string> => ({ 'kubernetes.io/metadata.name': namespace });

const labels = jsonSetting(z.record(labelKey, labelValue).refine((l) => Object.keys(l).length > 0, 'must name at least one label'));

/** Why `cidr` is not an IPv4 CIDR in canonical form (no host bits set), or undefined. */
export function invalidCidr(cidr: string): string | undefined {
  let parsed: Cidr;
  try {
    parsed = parseCidr(cidr);
  } catch (err) {
    return (err as Error).message;
  }
  const network = `${[24, 16, 8, 0].map((s) => Math.floor(parsed.base / 2 ** s) % 256).join('.')}/${parsed.prefix}`;
  return network === cidr ? undefined : `"${cidr}" has host bits set (the network is ${network})`;
}

const cidrList = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const list = (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const c of list) {
      const why = invalidCidr(c);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    }
    return list;
  });

export const tenantNetworkEnv = {
  TENANT_GATEWAY_NAMESPACE_LABELS: labels,
  TENANT_GATEWAY_POD_LABELS: labels,
  TENANT_CONTROLLER_NAMESPACE_LABELS: labels,
  TENANT_CONTROLLER_POD_LABELS: labels,
  TENANT_INGRESS_CIDRS: cidrList,
  TENANT_EGRESS_ALLOW: cidrList,
  TENANT_EGRESS_DENY: cidrList,
};
export type TenantNetworkEnv = z.output<z.ZodObject<typeof tenantNetworkEnv>>;

/** `controllerNamespace`: the controller's own (its NAMESPACE), whose pods may read tenant pods' /metrics. */
export function tenantNetworkFrom(env: TenantNetworkEnv, controllerNamespace: string): TenantNetworkSettings {
  return {
    gatewayNamespaceLabels: env.TENANT_GATEWAY_NAMESPACE_LABELS ?? { ...DEFAULT_GATEWAY_NAMESPACE_LABELS },
    gatewayPodLabels: env.TENANT_GATEWAY_POD_LABELS ?? { ...DEFAULT_GATEWAY_POD_LABELS },
    controllerNamespaceLabels: env.TENANT_CONTROLLER_NAMESPACE_LABELS ?? defaultControllerNamespaceLabels(controllerNamespace),
    controllerPodLabels: env.TENANT_CONTROLLER_POD_LABELS ?? { ...DEFAULT_CONTROLLER_POD_LABELS },
    ingressCidrs: env.TENANT_INGRESS_CIDRS,
    egressAllow: env.TENANT_EGRESS_ALLOW,
    egressDeny: env.TENANT_EGRESS_DENY,
  };
}
