import { describe, expect, it } from 'vitest';
import { FINALIZER, LABELS } from '../../schema/model-service.ts';
import { isOurs, modelServiceFor } from './model-service-object.ts';

const a = { id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K', tenant: 'acme', requestId: 'req-1', createdAt: new Date('2026-12-02T00:00:00Z') };
const spec = { image: 'ghcr.io/acme/llm:1', replicas: 2, port: 8000, resources: { cpu: '500m', memory: '512Mi' } } as Parameters<typeof modelServiceFor>[1];

describe('modelServiceFor', () => {
  it('names the CR after the admission, labels it with its identity, and carries the finalizer from creation', () => {
    const ms = modelServiceFor(a, spec, 'ns');
    expect(ms.metadata).toMatchObject({
      name: 'md-01jd5y3qw5zc8y1g1m5n8d4x7k',
      namespace: 'ns',
      labels: { [LABELS.admissionId]: a.id, [LABELS.tenant]: 'acme' },
      finalizers: [FINALIZER],
    });
    expect(ms.spec).toBe(spec);
    expect(isOurs(ms, a)).toBe(true);
    expect(isOurs(ms, { ...a, tenant: 'globex' })).toBe(false);
    expect(ms.metadata.labels).not.toHaveProperty(LABELS.instance);
  });

  it('with an installation (INSTANCE), the CR carries its label: the only ModelServices that installation watches', () => {
    expect(modelServiceFor(a, spec, 'md-acme', 'e2e-1').metadata.labels).toEqual({ [LABELS.admissionId]: a.id, [LABELS.tenant]: 'acme', [LABELS.instance]: 'e2e-1' });
  });
});
