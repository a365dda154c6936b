// The operator's view of one step: the log lines each action writes (message, level and fields),
// pinned per action, since a log line is what an operator searches for when a reservation is stuck.
import { describe, expect, it } from 'vitest';
import { stepOf } from '../../test/support/reconcile-harness.ts';
import { ago, modelService, NOW } from '../../test/support/reservation-fixtures.ts';

const CHARGED_3 = { cpu: 1500, memory: 1536, 'nvidia.com/gpu': 0, modelservices: 1 };
const READY = { state: 'ready', binding: { everReady: true } } as const;
const STILL_PODS = [
  { name: 'p-b', terminating: true },
  { name: 'p-a', terminating: false },
];
const decided = (state: string, action: string, cached = false) => ({ level: 'debug', msg: 'ledger action', state, action, cached });

describe('step: the log lines of each action', () => {
  it.each<{ name: string; f: Parameters<typeof stepOf>[0]; o: Parameters<typeof stepOf>[1]; want: Array<Record<string, unknown>> }>([
    {
      name: 'first Ready (from the cache)',
      f: { state: 'delivered' },
      o: { cached: modelService({ ready: true }) },
      want: [decided('delivered', 'markReady', true), { level: 'info', msg: 'first Ready recorded' }],
    },
    {
      name: 'a scale above the charge reverted',
      f: READY,
      o: { modelService: modelService({ replicas: 4 }) },
      want: [decided('ready', 'revertScale'), { level: 'warn', msg: 'scale above the charge reverted', from: 4, to: 2 }],
    },
    {
      name: 'an increase applied and settled',
      f: { ...READY, change: { generation: 2, applied: 1, settled: 1, fromReplicas: 1 } },
      o: { modelService: modelService({ replicas: 1 }) },
      want: [
        decided('ready', 'applyScale'),
        { level: 'info', msg: 'replicas changed on the ModelService', generation: 2, replicas: 2 },
        { level: 'info', msg: 'change of replicas applied and settled', generation: 2 },
      ],
    },
    {
      name: 'a decrease applied, its refund waiting',
      f: { ...READY, change: { generation: 2, applied: 1, settled: 1, fromReplicas: 3 }, amounts: CHARGED_3 },
      o: { modelService: modelService({ replicas: 3 }) },
      want: [
        decided('ready', 'applyScale'),
        { level: 'info', msg: 'replicas changed on the ModelService', generation: 2, replicas: 2 },
        { level: 'info', msg: 'change of replicas applied: the refund waits for the surplus pods', generation: 2 },
      ],
    },
    {
      name: 'a decrease refunded',
      f: { ...READY, change: { generation: 2, applied: 2, settled: 1, fromReplicas: 3 }, amounts: CHARGED_3 },
      o: {
        modelService: modelService({ replicas: 2 }),
        deployment: { generation: 3, observedGeneration: 3, specReplicas: 2, statusReplicas: 2 },
        pods: [{ name: 'p-a', terminating: false }, { name: 'p-b', terminating: false }],
      },
      want: [decided('ready', 'refund'), { level: 'info', msg: 'scale-down refunded: the surplus pods are gone', generation: 2, from: 3, to: 2 }],
    },
    {
      name: 'never Ready: deleted',
      f: { state: 'delivered' },
      o: { modelService: modelService({ createdAt: ago(700_000) }) },
      want: [decided('delivered', 'deleteCR'), { level: 'info', msg: 'ModelService delete issued', reason: 'never-ready', outcome: 'deleted', uid: 'uid-bound' }],
    },
    {
      name: 'a tenant delete',
      f: { state: 'deleting' },
      o: { modelService: modelService(), delete: 'gone' },
      want: [decided('deleting', 'deleteCR'), { level: 'info', msg: 'ModelService delete issued', reason: 'tenant-delete', outcome: 'gone', uid: 'uid-bound' }],
    },
    {
      name: 'an orphan deleted',
      f: { state: 'released' },
      o: { modelService: modelService() },
      want: [decided('released', 'deleteCR'), { level: 'info', msg: 'ModelService delete issued', reason: 'orphan', outcome: 'deleted', uid: 'uid-bound' }],
    },
    {
      name: 'released',
      f: { state: 'releasing' },
      o: { modelService: null, pods: [] },
      want: [decided('releasing', 'release'), { level: 'info', msg: 'quota released' }],
    },
    {
      name: 'a release blocked by pods',
      f: { state: 'releasing', stateChangedAt: ago(120_000) },
      o: { modelService: null, pods: STILL_PODS },
      want: [
        decided('releasing', 'waitForRelease'),
        { level: 'warn', msg: 'release blocked: pods still exist', reason: 'PodsStillPresent', pods: ['p-a', 'p-b'], finalizers: [], since: NOW.toISOString() },
      ],
    },
    {
      name: 'a release blocked by finalizers',
      f: { state: 'releasing', stateChangedAt: ago(120_000) },
      o: { modelService: modelService({ deleting: true, finalizers: ['example.com/keep'] }), pods: [] },
      want: [
        decided('releasing', 'waitForRelease'),
        { level: 'warn', msg: 'release blocked: the ModelService stays in deletion', reason: 'Finalizers', pods: [], finalizers: ['example.com/keep'], since: NOW.toISOString() },
      ],
    },
    {
      name: 'a conflict',
      f: READY,
      o: { modelService: modelService({ admissionId: 'OTHER' }) },
      want: [
        decided('ready', 'conflict'),
        { level: 'warn', msg: 'reservation in conflict: an operator must look', reason: 'ModelService under our name carries admission id OTHER of tenant acme', code: 'ForeignModelService' },
      ],
    },
    {
      name: 'the CR gone behind our back',
      f: { state: 'delivered' },
      o: { cached: null, modelService: null },
      want: [decided('delivered', 'toReleasing', true), { level: 'info', msg: 'releasing: the ModelService is gone or going', reason: 'ModelService deleted outside ModelDock' }],
    },
    {
      name: 'startup progress only (nothing decided)',
      f: { state: 'delivered' },
      o: { cached: modelService({ scheduledAt: ago(30_000) }) },
      want: [{ level: 'debug', msg: 'startup progress recorded', scheduled: true, started: false }],
    },
  ])('$name', async ({ f, o, want }) => {
    const { h } = await stepOf(f, o);
    expect(h.logs.map(({ time: _time, ...line }) => line)).toEqual(want);
  });
});
