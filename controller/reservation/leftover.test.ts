import { describe, expect, it } from 'vitest';
import type { ObservedCR, ObservedPod } from './decide.ts';
import { decideLeftover, type LeftPlacement } from './leftover.ts';

const held = { cpu: 500, memory: 512, 'nvidia.com/gpu': 0, modelservices: 1 };
const left = (state: string, seq = 1): LeftPlacement => ({ seq, state, anchor: '~a0', held });
const cr = (deleting = false): ObservedCR => ({
  uid: 'uid-1',
  resourceVersion: '7',
  creationTimestamp: new Date(0),
  deleting,
  finalizers: [],
  admissionId: '01MOVED',
  tenant: 'acme',
  ready: true,
  scale: null,
  autoscale: null,
});
const pod: ObservedPod = { name: 'md-01moved-abc', terminating: true };

describe('decideLeftover (an admission moved off this cluster)', () => {
  it.each([
    ['never placed here: nothing, whatever is there', [], cr(), true, [], { type: 'none' }],
    ['its ModelService still here: delete it', [left('stranded')], cr(), true, [], { type: 'deleteCR', uid: 'uid-1' }],
    ['its ModelService being deleted: wait', [left('stranded')], cr(true), true, [], { type: 'wait' }],
    ['no ModelService, a pod left (Terminating): wait', [left('stranded')], null, false, [pod], { type: 'wait' }],
    ['nothing left: free what is stranded', [left('freed', 1), left('stranded', 3)], null, false, [], { type: 'free', placements: [left('stranded', 3)] }],
    ['nothing left and nothing stranded: nothing', [left('freed')], null, false, [], { type: 'none' }],
    ["another's ModelService under the name, none of its pods: free (that object is not ours to delete)", [left('stranded')], cr(), false, [], { type: 'free', placements: [left('stranded')] }],
  ] as const)('%s', (_, placements, observed, ours, pods, want) => {
    expect(decideLeftover(placements, observed, ours, pods)).toEqual(want);
  });
});
