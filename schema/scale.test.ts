import { describe, expect, it } from 'vitest';
import { chargedReplicasOf, pendingChangeOf, scaleDelta, scaleRequestSchema, type ChangeProgress } from './scale.ts';

const latest = { fromReplicas: 2, toReplicas: 4, requestedAt: '2026-12-02T00:00:00.000Z' };

describe('scaleRequestSchema', () => {
  it('takes replicas only, within 0..max', () => {
    expect(scaleRequestSchema(8).parse({ replicas: 0 })).toEqual({ replicas: 0 });
    expect(scaleRequestSchema(8).safeParse({ replicas: 9 }).success).toBe(false);
    expect(scaleRequestSchema(8).safeParse({ replicas: -1 }).success).toBe(false);
    expect(scaleRequestSchema(8).safeParse({ replicas: 1.5 }).success).toBe(false);
    expect(scaleRequestSchema(8).safeParse({ replicas: 2, image: 'x' }).success).toBe(false);
    expect(scaleRequestSchema(8).safeParse({}).success).toBe(false);
  });
});

describe('scaleDelta', () => {
  it('is the per-replica amounts times the replicas moved, either way, without the modelservices count', () => {
    const spec = { resources: { cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '1' } };
    expect(scaleDelta(spec, 2, 5)).toEqual({ cpu: 1500, memory: 3072, 'nvidia.com/gpu': 3, modelservices: 0 });
    expect(scaleDelta(spec, 5, 2)).toEqual({ cpu: 1500, memory: 3072, 'nvidia.com/gpu': 3, modelservices: 0 });
    expect(scaleDelta(spec, 3, 3)).toEqual({ cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 });
  });
});

describe('pendingChangeOf / chargedReplicasOf', () => {
  const none: ChangeProgress = { generation: 1, appliedGeneration: 1, settledGeneration: 1, latest: null };
  const applying: ChangeProgress = { generation: 2, appliedGeneration: 1, settledGeneration: 1, latest };
  const down: ChangeProgress = { generation: 3, appliedGeneration: 3, settledGeneration: 2, latest: { ...latest, fromReplicas: 4, toReplicas: 1 } };
  it('no change, or a settled one, is not pending and charges the desired replicas', () => {
    expect(pendingChangeOf(none, true)).toBeNull();
    expect(chargedReplicasOf(2, none)).toBe(2);
    const done = { ...applying, appliedGeneration: 2, settledGeneration: 2 };
    expect(pendingChangeOf(done, true)).toBeNull();
    expect(chargedReplicasOf(4, done)).toBe(4);
    // A decrease once refunded charges the new, smaller size.
    const refunded = { generation: 3, appliedGeneration: 3, settledGeneration: 3, latest: { ...latest, fromReplicas: 4, toReplicas: 1 } };
    expect(chargedReplicasOf(1, refunded)).toBe(1);
  });
  it('an increase is applying until the CR carries it, and charged at once', () => {
    expect(pendingChangeOf(applying, true)).toEqual({ generation: 2, fromReplicas: 2, toReplicas: 4, phase: 'applying', requestedAt: latest.requestedAt });
    expect(chargedReplicasOf(4, applying)).toBe(4);
  });
  it('a decrease awaits the scale-down once applied, and stays charged for the larger side', () => {
    expect(pendingChangeOf(down, true)).toMatchObject({ phase: 'awaitingScaleDown', fromReplicas: 4, toReplicas: 1 });
    expect(chargedReplicasOf(1, down)).toBe(4);
  });
  it('a delete supersedes a pending change: none is shown, the larger side stays charged until the release', () => {
    expect(pendingChangeOf(down, false)).toBeNull();
    expect(chargedReplicasOf(1, down)).toBe(4);
  });
});
