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

  it('aggregates similar events and bounds what waits for the events rate limit', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const client = { create: async (_p: string, b: Record<string, unknown>) => (await gate, bodies.push(b)) } as unknown as KubeClient;
    const rec = new KubeEventRecorder({ client, controller: 'c', instance: 'i', log: silentLogger, maxPending: 11, now: () => 5_000 });
    const obj = (uid: string) => ({ apiVersion: 'v1', kind: 'ModelService', metadata: { name: uid, namespace: 'ns', uid } });
    for (let i = 0; i < 12; i++) rec.record(obj('a'), 'Warning', 'ChildConflict', `problem ${i}`);
    rec.record(obj('b'), 'Normal', 'Running', 'over the bound: dropped');
    release();
    await rec.flush();
    expect(bodies.map((b) => b.note)).toEqual([...Array.from({ length: 10 }, (_, i) => `problem ${i}`), '(combined from similar events): problem 10']);
  });
});

