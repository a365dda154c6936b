import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_GATEWAY_NAMESPACE_LABELS, DEFAULT_GATEWAY_POD_LABELS, invalidCidr, tenantNetworkEnv, tenantNetworkFrom } from './network-settings.ts';

const parse = (env: Record<string, string>) => z.object(tenantNetworkEnv).safeParse(env);

describe('the tenant network settings (controller env)', () => {
  it('default: the gateway label, no ingress CIDR, no egress but DNS', () => {
    const r = parse({});
    expect(r.success).toBe(true);
    expect(tenantNetworkFrom(r.data!)).toEqual({ gatewayNamespaceLabels: DEFAULT_GATEWAY_NAMESPACE_LABELS, gatewayPodLabels: DEFAULT_GATEWAY_POD_LABELS, ingressCidrs: [], egressAllow: [], egressDeny: [] });
  });

  it('comma-separated CIDRs (blanks ignored) and a JSON label set', () => {
    const r = parse({
      TENANT_GATEWAY_NAMESPACE_LABELS: '{"team":"edge"}',
      TENANT_GATEWAY_POD_LABELS: '{"app":"gw"}',
      TENANT_INGRESS_CIDRS: '10.243.255.1/32',
      TENANT_EGRESS_ALLOW: ' 0.0.0.0/0 , ',
      TENANT_EGRESS_DENY: '10.0.0.0/8,192.168.0.0/16',
    });
    expect(r.success).toBe(true);
    expect(tenantNetworkFrom(r.data!)).toEqual({
      gatewayNamespaceLabels: { team: 'edge' },
      gatewayPodLabels: { app: 'gw' },
      ingressCidrs: ['10.243.255.1/32'],
      egressAllow: ['0.0.0.0/0'],
      egressDeny: ['10.0.0.0/8', '192.168.0.0/16'],
    });
  });

  it.each([
    [{ TENANT_EGRESS_ALLOW: '10.0.0.1/8' }, 'host bits set (the network is 10.0.0.0/8)'],
    [{ TENANT_EGRESS_DENY: '10.0.0.0' }, 'not an IPv4 CIDR'],
    [{ TENANT_INGRESS_CIDRS: '300.0.0.0/8' }, 'not an IPv4 CIDR'],
    [{ TENANT_INGRESS_CIDRS: 'fd00::/8' }, 'not an IPv4 CIDR'],
    [{ TENANT_GATEWAY_NAMESPACE_LABELS: '{}' }, 'at least one label'],
    [{ TENANT_GATEWAY_NAMESPACE_LABELS: '{"Bad Key":"x"}' }, 'key'],
    [{ TENANT_GATEWAY_POD_LABELS: '{}' }, 'at least one label'],
  ])('refused at start: %j', (env, why) => {
    const r = parse(env);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(why);
  });

  it('invalidCidr accepts canonical CIDRs only', () => {
    expect(invalidCidr('0.0.0.0/0')).toBeUndefined();
    expect(invalidCidr('169.254.169.254/32')).toBeUndefined();
    expect(invalidCidr('10.1.0.0/15')).toContain('10.0.0.0/15');
    expect(invalidCidr('10.0.0.0/33')).toContain('not an IPv4 CIDR');
  });
});
