import { describe, expect, it } from 'vitest';
import type { QuotaView } from './model.ts';
import { admission } from './test-fixtures.ts';
import { bar, plain, quantity, renderAdmission, renderList, renderQuota, spinnerLine, stageLine, table, type Look, type Style } from './render.ts';

const flat: Look = { style: plain, fancy: false };
const tagged: Style = (c, t) => `<${c}>${t}</${c}>`;


describe('table', () => {
  it('pads columns to the widest cell and styles after padding', () => {
    expect(table(['A', 'BB'], [['xxx', '1'], ['y', '22']], plain)).toBe('A    BB\nxxx  1\ny    22');
    expect(table(['A', 'B'], [['x', 'y']], tagged, (col) => (col === 0 ? 'red' : undefined))).toBe('<bold>A</bold>  <bold>B</bold>\n<red>x</red>  y');
  });
});

describe('bar', () => {
  it.each([
    [0, 8000, false, '[..........]   0%'],
    [4000, 8000, false, '[#####.....]  50%'],
    [8000, 8000, true, '[██████████] 100%'],
    [0, 0, false, '[..........]   0%'],
    [3, 0, false, '[##########] over'],
  ])('%i of %i', (used, hard, fancy, text) => expect(bar(used, hard, 10, fancy)).toBe(text));
});

describe('quantities', () => {
  it.each([
    ['millicores', 1500, '1500m'],
    ['millicores', 2000, '2'],
    ['MiB', 512, '512Mi'],
    ['MiB', 4096, '4Gi'],
    ['count', 2, '2'],
  ])('%s %i → %s', (unit, n, text) => expect(quantity(unit, n)).toBe(text));
});

describe('renderQuota', () => {
  const q: QuotaView = {
    tenant: 'acme',
    resources: {
      cpu: { unit: 'millicores', hard: 8000, reserved: 4000, active: 3000, releasing: 1000, blocked: 0, conflict: 0, available: 4000 },
      memory: { unit: 'MiB', hard: 32768, reserved: 16384, active: 16384, releasing: 0, blocked: 0, conflict: 0, available: 16384 },
      'nvidia.com/gpu': { unit: 'count', hard: 2, reserved: 2, active: 2, releasing: 0, blocked: 0, conflict: 0, available: 0 },
    },
  };
  it('one row per resource with used / hard and a bar', () => {
    expect(renderQuota(q, flat).split('\n')).toEqual([
      'tenant acme',
      'RESOURCE        USED / HARD  USAGE                        ACTIVE  RELEASING  BLOCKED  AVAILABLE',
      'cpu             4 / 8        [##########..........]  50%  3       1          0        4',
      'memory          16Gi / 32Gi  [##########..........]  50%  16Gi    0Mi        0Mi      16Gi',
      'nvidia.com/gpu  2 / 2        [####################] 100%  2       0          0        0',
    ]);
  });
  it('colours a full resource red', () => {
    expect(renderQuota(q, { style: tagged, fancy: true })).toContain('<red>[████████████████████] 100%</red>');
  });
});

describe('renderList', () => {
  it('a table with state and age; an empty list says so', () => {
    const now = new Date('2026-12-01T10:03:07.000Z');
    const out = renderList([admission({ state: 'ready', endpoint: 'http://chat.ns.svc:8000' })], now, flat);
    expect(out).toBe('ID                          NAME  STATE  REPLICAS  AGE    ENDPOINT\n01JD5Y3QW5ZC8Y1G1M5N8D4X7K  chat  ready  2         3m07s  http://chat.ns.svc:8000');
    expect(renderList([], now, flat)).toBe('no admissions');
  });
});

describe('stage lines', () => {
  const at = '2026-12-01T10:00:00.000Z';
  it('elapsed after admission, a reached stage without time, an unreported one', () => {
    expect(stageLine({ stage: 'admitted', status: 'done', at, sinceMs: 0 }, flat)).toBe(`ok admitted   ${at}`);
    expect(stageLine({ stage: 'ready', status: 'done', at: '2026-12-01T10:00:02.250Z', sinceMs: 2250 }, flat)).toBe('ok ready      +2.3s');
    expect(stageLine({ stage: 'delivered', status: 'done', at: null, sinceMs: null }, flat)).toBe('ok delivered  reached (time not reported)');
    expect(stageLine({ stage: 'scheduled', status: 'unreported', at: null, sinceMs: null }, flat)).toBe('- scheduled  not reported by this API');
    expect(stageLine({ stage: 'ready', status: 'done', at: '2026-12-01T10:00:01.000Z', sinceMs: 1000 }, { style: tagged, fancy: true })).toBe('<green>✔</green> ready      +1.0s');
  });
  it('spinner line names the awaited stage and the elapsed time', () => {
    expect(spinnerLine(1, 'scheduled', 4200, undefined, plain)).toBe('⠙ waiting for scheduled … 4.2s');
    expect(spinnerLine(10, 'ready', 500, 'last failure: OOMKilled', plain)).toBe('⠋ waiting for ready … 500ms  (last failure: OOMKilled)');
  });
});

describe('renderAdmission', () => {
  it('shows state, timeline, ReleaseBlocked pods and the last failure', () => {
    const out = renderAdmission(
      admission({
        state: 'releasing',
        binding: { namespace: 'ns', crName: 'md-x', everReady: true, firstReadyAt: '2026-12-01T10:00:01.000Z' },
        releaseBlockedSince: '2026-12-01T10:05:00.000Z',
        releaseBlockedPods: ['md-x-1', 'md-x-2'],
        lastFailure: { pod: 'md-x-1', reason: 'OOMKilled', exitCode: 137, message: 'out of memory', at: '2026-12-01T10:04:00.000Z' },
      }),
      flat,
    );
    expect(out).toContain('state:     releasing');
    expect(out).toContain('ok ready      +1.0s');
    expect(out).toContain('- scheduled  not reported by this API');
    expect(out).toContain('ReleaseBlocked since 2026-12-01T10:05:00.000Z: waiting for md-x-1, md-x-2 to be gone');
    expect(out).toContain('last failure: pod md-x-1: OOMKilled, exit code 137 — out of memory (at 2026-12-01T10:04:00.000Z)');
  });
  it('shows the cluster it is placed on; none while queued or from an older API', () => {
    expect(renderAdmission(admission({ cluster: 'eu-2' }), flat)).toContain('  cluster:   eu-2\n');
    expect(renderAdmission(admission({ cluster: null }), flat)).not.toContain('cluster:');
    expect(renderAdmission(admission({}), flat)).not.toContain('cluster:');
  });
  it('shows the last error with its code; without a code (an older API), the message alone', () => {
    const coded = renderAdmission(admission({ state: 'released', lastError: 'never Ready within 600000 ms', lastErrorCode: 'NeverReady' }), flat);
    expect(coded).toContain('last error:   NeverReady: never Ready within 600000 ms');
    expect(renderAdmission(admission({ state: 'released', lastError: 'never Ready' }), flat)).toContain('last error:   never Ready');
  });
  it('shows the finalizers of a ModelService stuck in deletion (ReleaseBlocked, reason Finalizers)', () => {
    const out = renderAdmission(
      admission({ state: 'releasing', releaseBlockedSince: '2026-12-01T10:05:00.000Z', releaseBlockedReason: 'Finalizers', releaseBlockedPods: [], releaseBlockedFinalizers: ['example.com/hold'] }),
      flat,
    );
    expect(out).toContain('ReleaseBlocked since 2026-12-01T10:05:00.000Z: no pod left, the ModelService stays in deletion; finalizers: example.com/hold');
  });
});
