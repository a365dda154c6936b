// The ModelService spec the cluster benchmarks create (B3, B6): one tiny replica, never pulled
// (KWOK runs the pods), so what is measured is the control plane, not the image.
import { modelServiceSpecSchema } from '../../schema/model-service.ts';

export const SPEC = modelServiceSpecSchema.parse({ image: 'example.invalid/modeldock/model:1', replicas: 1, resources: { cpu: '10m', memory: '16Mi' } });
