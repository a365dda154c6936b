import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { DEFAULT_CONTROLLER_POD_LABELS, DEFAULT_GATEWAY_NAMESPACE_LABELS, DEFAULT_GATEWAY_POD_LABELS, invalidCidr, tenantNetworkEnv, tenantNetworkFrom } from './network-settings.ts';

const ROOT = join(import.meta.dirname, '../..');
const parse = (env: Record<string, string>) => z.object(tenantNetworkEnv).safeParse(env);

describe('the tenant network settings (controller env)', () => {
  it('default: the gateway label, the controller’s own namespace and pods, no ingress CIDR, no egress but DNS', () => {
    const r = parse({});
    expect(r.success).toBe(true);
    expect(tenantNetworkFrom(r.data!, 'md-system')).toEqual({
      gatewayNamespaceLabels: DEFAULT_GATEWAY_NAMESPACE_LABELS,
      gatewayPodLabels: DEFAULT_GATEWAY_POD_LABELS,
      controllerNamespaceLabels: { 'kubernetes.io/metadata.name': 'md-system' },
      controllerPodLabels: { 'app.kubernetes.io/name': 'modeldock-controller' },
      ingressCidrs: [],
      egressAllow: [],
      egressDeny: [],
    });
  });

  it('the default controller pods are the shipped controller Deployment’s, and no other shipped workload’s', () => {
    const podLabels = (file: string) =>
      parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))
        .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; spec?: { template?: { metadata?: { labels?: Record<string, string> } } } })
        .filter((o) => o.spec?.template)
        .map((o) => ({ name: `${o.kind}/${o.metadata?.name}`, labels: o.spec!.template!.metadata?.labels ?? {} }));
    const matches = (labels: Record<string, string>) => Object.entries(DEFAULT_CONTROLLER_POD_LABELS).every(([k, v]) => labels[k] === v);
    const workloads = ['k8s/base/controller.yaml', 'k8s/gateway/gateway.yaml', 'k8s/monitoring/monitoring.yaml'].flatMap(podLabels);
    expect(workloads.filter((w) => matches(w.labels)).map((w) => w.name)).toEqual(['Deployment/modeldock-controller']);
  });

  it('comma-separated CIDRs (blanks ignored) and a JSON label set', () => {
    const r = parse({
      TENANT_GATEWAY_NAMESPACE_LABELS: '{"team":"edge"}',
      TENANT_GATEWAY_POD_LABELS: '{"app":"gw"}',
      TENANT_CONTROLLER_NAMESPACE_LABELS: '{"team":"ops"}',
      TENANT_CONTROLLER_POD_LABELS: '{"app":"ctl","tier":"control"}',
      TENANT_INGRESS_CIDRS: '10.243.255.1/32',
      TENANT_EGRESS_ALLOW: ' 0.0.0.0/0 , ',
      TENANT_EGRESS_DENY: '10.0.0.0/8,192.168.0.0/16',
    });
    expect(r.success).toBe(true);
    expect(tenantNetworkFrom(r.data!, 'md-system')).toEqual({
      gatewayNamespaceLabels: { team: 'edge' },
      gatewayPodLabels: { app: 'gw' },
      controllerNamespaceLabels: { team: 'ops' },
      controllerPodLabels: { app: 'ctl', tier: 'control' },
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
    [{ TENANT_CONTROLLER_NAMESPACE_LABELS: '{}' }, 'at least one label'],
    [{ TENANT_CONTROLLER_POD_LABELS: '{}' }, 'at least one label'],
    [{ TENANT_CONTROLLER_POD_LABELS: '{"app":"not a value"}' }, 'value'],
    [{ TENANT_CONTROLLER_NAMESPACE_LABELS: 'kubernetes.io/metadata.name=x' }, 'is not JSON'],
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
