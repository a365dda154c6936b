import { describe, expect, it } from 'vitest';
import type { Amounts } from '../schema/model-service.ts';
import type { AllotmentMode } from './clusters.ts';
import { placementPolicy, PLACEMENT_POLICIES, roomFits, shareAfter, type ClusterRoom } from './placement-policy.ts';

const amounts = (cpu: number, modelservices: number, gpu = 0): Amounts => ({ cpu, memory: 0, 'nvidia.com/gpu': gpu, modelservices });
const room = (cluster: string, allotted: Amounts, reserved: Amounts, o: { mode?: AllotmentMode; stranded?: Amounts } = {}): ClusterRoom => ({
  cluster,
  mode: o.mode ?? 'open',
  allotted,
  reserved,
  stranded: o.stranded ?? amounts(0, 0),
});
const ONE = amounts(1000, 1);

describe('roomFits', () => {
  it.each([
    ['exactly full after', room('c', amounts(4000, 4), amounts(3000, 3)), true],
    ['one service over', room('c', amounts(8000, 4), amounts(3000, 4)), false],
    ['cpu over', room('c', amounts(3500, 8), amounts(3000, 1)), false],
    ['stranded counts as taken', room('c', amounts(4000, 4), amounts(2000, 2), { stranded: amounts(1000, 1) }), true],
    ['stranded fills it', room('c', amounts(4000, 4), amounts(2000, 2), { stranded: amounts(2000, 2) }), false],
  ])('%s', (_, r, fits) => expect(roomFits(r, ONE)).toBe(fits));
});

describe('shareAfter', () => {
  it('is the dominant share over the wanted resources after placement', () => {
    expect(shareAfter(room('c', amounts(4000, 10), amounts(1000, 1)), ONE)).toBe(0.5); // cpu 2000/4000 dominates services 2/10
    expect(shareAfter(room('c', amounts(0, 4), amounts(0, 0)), amounts(0, 1))).toBe(0.25); // cpu neither wanted nor used
  });
  it('is infinite where a wanted resource has nothing allotted', () => {
    expect(shareAfter(room('c', amounts(4000, 4), amounts(0, 0)), amounts(1000, 1, 1))).toBe(Infinity);
  });
});

describe('least-loaded', () => {
  const p = placementPolicy('least-loaded');
  it('ranks the fitting open clusters by share after placement, ties by name, and the short ones apart', () => {
    const rooms = [
      room('c3', amounts(4000, 4), amounts(1000, 1)),
      room('c1', amounts(4000, 4), amounts(2000, 2)),
      room('c2', amounts(4000, 4), amounts(1000, 1)),
      room('c4', amounts(4000, 4), amounts(4000, 4)),
      room('c0', amounts(9000, 9), amounts(0, 0), { mode: 'draining' }),
      room('c5', amounts(9000, 9), amounts(0, 0), { mode: 'closed' }),
      room('c6', amounts(2000, 2), amounts(2000, 2)),
    ];
    expect(p.rank({ want: ONE, rooms, affinity: [] })).toEqual([
      { cluster: 'c2', fits: true },
      { cluster: 'c3', fits: true },
      { cluster: 'c1', fits: true },
      { cluster: 'c4', fits: false },
      { cluster: 'c6', fits: false },
    ]);
  });
  it('fills the emptiest first: three clusters of 4 take 10 admissions 4/3/3 at most, never over', () => {
    const rooms = ['c1', 'c2', 'c3'].map((c) => room(c, amounts(4000, 4), amounts(0, 0)));
    for (let i = 0; i < 10; i++) {
      const first = p.rank({ want: ONE, rooms, affinity: [] }).find((x) => x.fits)!;
      const r = rooms.find((x) => x.cluster === first.cluster)!;
      r.reserved = amounts(r.reserved.cpu + 1000, r.reserved.modelservices + 1);
    }
    expect(rooms.map((r) => r.reserved.modelservices)).toEqual([4, 3, 3]);
    expect(p.rank({ want: ONE, rooms, affinity: [] })).toEqual([
      { cluster: 'c2', fits: true },
      { cluster: 'c3', fits: true },
      { cluster: 'c1', fits: false },
    ]);
  });
  it('reads no affinity', () => expect(p.readsAffinity).toBe(false));
});

describe('affinity', () => {
  const p = placementPolicy('affinity');
  const rooms = ['c1', 'c2', 'c3'].map((c, i) => room(c, amounts(4000, 4), amounts(1000 * i, i)));
  const names = (r: ReturnType<typeof p.rank>) => r.map((x) => x.cluster);
  it("puts the tenant's ranked clusters first, in its order, then the rest least loaded", () => {
    expect(names(p.rank({ want: ONE, rooms, affinity: ['c3', 'c2'] }))).toEqual(['c3', 'c2', 'c1']);
    expect(names(p.rank({ want: ONE, rooms, affinity: [] }))).toEqual(['c1', 'c2', 'c3']);
  });
  it('keeps a preferred cluster first even without room (placement borrows for it before going elsewhere)', () => {
    const full = [...rooms.slice(0, 2), room('c3', amounts(4000, 4), amounts(4000, 4))];
    expect(p.rank({ want: ONE, rooms: full, affinity: ['c3'] })).toEqual([
      { cluster: 'c3', fits: false },
      { cluster: 'c1', fits: true },
      { cluster: 'c2', fits: true },
    ]);
  });
  it('reads the affinity', () => expect(p.readsAffinity).toBe(true));
});

describe('placementPolicy', () => {
  it('defaults to least-loaded and refuses an unknown name', () => {
    expect(placementPolicy(undefined).name).toBe('least-loaded');
    expect(Object.keys(PLACEMENT_POLICIES)).toEqual(['least-loaded', 'affinity']);
    expect(() => placementPolicy('random')).toThrow(/PLACEMENT_POLICY "random" is not one of least-loaded, affinity/);
  });
});
