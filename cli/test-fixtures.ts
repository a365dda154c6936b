// An admission as the API returns it, for the unit tests of the renderers and decisions.
import type { AdmissionView } from './model.ts';

export const admission = (over: Partial<AdmissionView> = {}): AdmissionView => ({
  id: '01JD5Y3QW5ZC8Y1G1M5N8D4X7K',
  name: 'chat',
  state: 'admitted',
  spec: { image: 'ghcr.io/acme/chat:1', replicas: 2, port: 8000, resources: { cpu: '500m', memory: '1Gi' } },
  createdAt: '2026-12-01T10:00:00.000Z',
  stateChangedAt: '2026-12-01T10:00:00.000Z',
  binding: null,
  endpoint: null,
  releaseBlockedSince: null,
  releaseBlockedPods: null,
  lastError: null,
  deadOutboxRows: 0,
  ...over,
});
