// Fixtures shared by the desired-*.test.ts suites (desired.ts): a parsed ModelService. Test code only.
import { modelServiceSpecSchema, type ModelService } from '../../schema/model-service.ts';

export const ms = (labels: Record<string, string> = {}, spec: object = {}): ModelService => ({
  apiVersion: 'modeldock.io/v1alpha1',
  kind: 'ModelService',
  metadata: { name: 'md-01abc', namespace: 'lab', uid: 'uid-1', labels },
  spec: modelServiceSpecSchema.parse({ image: 'example.invalid/m:1', replicas: 2, resources: { cpu: '100m', memory: '128Mi' }, ...spec }),
});
