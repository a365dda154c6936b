import { describe, expect, it } from 'vitest';
import { LABELS } from '../../schema/model-service.ts';
import { foreignNamespace, POD_SECURITY_LABELS, tenantNamespaceObject } from './namespace.ts';

describe('the tenant namespace', () => {
  it("is labelled as ModelDock's, with its tenant, the installation when set, and Pod Security restricted enforced", () => {
    expect(tenantNamespaceObject('md-acme', 'acme', undefined).metadata).toEqual({
      name: 'md-acme',
      labels: { [LABELS.managedBy]: 'modeldock', [LABELS.tenant]: 'acme', ...POD_SECURITY_LABELS },
    });
    expect(POD_SECURITY_LABELS['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(tenantNamespaceObject('x-acme', 'acme', 'x').metadata.labels?.[LABELS.instance]).toBe('x');
  });

  it("an existing namespace is used only if it is this tenant's (and this installation's)", () => {
    const ns = (labels: Record<string, string>) => ({ metadata: { name: 'md-acme', labels } });
    const ours = tenantNamespaceObject('md-acme', 'acme', 'x');
    expect(foreignNamespace(ours, 'acme', 'x')).toBeUndefined();
    expect(foreignNamespace(ours, 'acme', undefined)).toBeUndefined();
    expect(foreignNamespace({ metadata: { name: 'md-acme' } }, 'acme', undefined)).toContain("is not ModelDock's");
    expect(foreignNamespace(ns({ [LABELS.managedBy]: 'helm', [LABELS.tenant]: 'acme' }), 'acme', undefined)).toContain("is not ModelDock's");
    expect(foreignNamespace(ns({ [LABELS.managedBy]: 'modeldock', [LABELS.tenant]: 'globex' }), 'acme', undefined)).toContain('belongs to tenant "globex"');
    expect(foreignNamespace(ns({ [LABELS.managedBy]: 'modeldock' }), 'acme', undefined)).toContain('belongs to tenant ""');
    expect(foreignNamespace(tenantNamespaceObject('md-acme', 'acme', 'y'), 'acme', 'x')).toContain('another ModelDock installation');
  });
});
