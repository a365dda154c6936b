import { describe, expect, it } from 'vitest';
import { LABELS } from '../../schema/model-service.ts';
import { TENANT_QUOTA_NAME, tenantResourceQuota } from './quota.ts';

describe('tenantResourceQuota', () => {
  it("mirrors the ledger's hard quota: cpu and memory as requests and limits, GPUs as requests, pods = count × MAX_REPLICAS", () => {
    const q = tenantResourceQuota('md-acme', 'acme', { cpu: 8000, memory: 32768, 'nvidia.com/gpu': 2, modelservices: 20 }, { maxReplicas: 16, instance: undefined });
    expect(q.metadata).toEqual({ name: TENANT_QUOTA_NAME, namespace: 'md-acme', labels: { [LABELS.managedBy]: 'modeldock', [LABELS.tenant]: 'acme' } });
    expect(q.spec?.hard).toEqual({
      'requests.cpu': '8000m',
      'limits.cpu': '8000m',
      'requests.memory': '32768Mi',
      'limits.memory': '32768Mi',
      'requests.nvidia.com/gpu': '2',
      pods: '320',
    });
  });

  it('a resource without a ledger row is 0 (the ledger admits nothing that charges it); the installation labels it', () => {
    const q = tenantResourceQuota('md-acme', 'acme', { cpu: 500 }, { maxReplicas: 4, instance: 'e2e-1' });
    expect(q.spec?.hard).toMatchObject({ 'requests.cpu': '500m', 'requests.memory': '0Mi', 'requests.nvidia.com/gpu': '0', pods: '0' });
    expect(q.metadata.labels?.[LABELS.instance]).toBe('e2e-1');
  });
});
