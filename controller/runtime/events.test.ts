import { describe, expect, it } from 'vitest';
import { KubeEventRecorder } from './events.ts';
import type { KubeClient } from './kube.ts';
import { silentLogger } from './log.ts';

describe('KubeEventRecorder', () => {
  it('writes an events.k8s.io/v1 Event and drops repeats within the window', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    let now = 1_000_000;
    const client = { create: async (_p: string, b: Record<string, unknown>) => bodies.push(b) } as unknown as KubeClient;
    const rec = new KubeEventRecorder({ client, controller: 'modeldock.io/controller', instance: 'i', log: silentLogger, dedupWindowMs: 1000, now: () => now });
    const obj = { apiVersion: 'modeldock.io/v1alpha1', kind: 'ModelService', metadata: { name: 'a', namespace: 'ns', uid: 'u' } };
    rec.record(obj, 'Normal', 'Running', '1/1');
    rec.record(obj, 'Normal', 'Running', '1/1');
    rec.record(obj, 'Warning', 'Degraded', 'x');
    now += 1001;
    rec.record(obj, 'Normal', 'Running', '1/1');
    await rec.flush();
    expect(bodies.map((b) => b.reason)).toEqual(['Running', 'Degraded', 'Running']);
    expect(bodies[0]).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      type: 'Normal',
      reportingController: 'modeldock.io/controller',
      regarding: { kind: 'ModelService', name: 'a', uid: 'u' },
    });
    expect(String(bodies[0]?.eventTime)).toMatch(/\.\d{6}Z$/);
    expect(String((bodies[0]?.metadata as { name: string }).name)).toMatch(/^a\.[0-9a-f]+$/);
  });
});
