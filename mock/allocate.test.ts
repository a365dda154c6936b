import { describe, expect, test } from 'vitest';
import { FILL_BYTE, MIB, allocateResident } from './allocate.ts';

/** Records every call, in order. */
function recorder() {
  const calls: string[] = [];
  const kept: Buffer[] = [];
  return {
    calls,
    kept,
    alloc: (bytes: number) => {
      calls.push(`alloc ${bytes}`);
      return Buffer.alloc(bytes, FILL_BYTE);
    },
    pause: async (ms: number) => void calls.push(`pause ${ms}`),
    keep: (chunk: Buffer) => void kept.push(chunk),
  };
}

describe('allocateResident', () => {
  test('takes the total in chunks of chunkBytes, the last one smaller, pausing between chunks only', async () => {
    const r = recorder();
    const taken = await allocateResident(2 * MIB + 5, { chunkBytes: MIB, pauseMs: 3, ...r });
    expect(taken).toBe(2 * MIB + 5);
    expect(r.calls).toEqual([`alloc ${MIB}`, 'pause 3', `alloc ${MIB}`, 'pause 3', 'alloc 5']);
    expect(r.kept.map((c) => c.length)).toEqual([MIB, MIB, 5]);
  });

  test('keeps a reference to every chunk it allocated', async () => {
    const r = recorder();
    await allocateResident(10 * 1024, { chunkBytes: 4096, ...r });
    expect(r.kept).toHaveLength(3);
    expect(r.kept.reduce((sum, c) => sum + c.length, 0)).toBe(10 * 1024);
  });

  test('the default chunk is 8 MiB', async () => {
    const r = recorder();
    await allocateResident(20 * MIB, r);
    expect(r.calls.filter((c) => c.startsWith('alloc'))).toEqual([`alloc ${8 * MIB}`, `alloc ${8 * MIB}`, `alloc ${4 * MIB}`]);
  });

  test('the default allocator writes every byte with a non-zero value, in Buffers outside the V8 heap', async () => {
    const kept: Buffer[] = [];
    const external = process.memoryUsage().arrayBuffers;
    await allocateResident(3 * MIB, { chunkBytes: 2 * MIB, pauseMs: 0, keep: (c) => void kept.push(c) });
    expect(process.memoryUsage().arrayBuffers - external).toBeGreaterThanOrEqual(3 * MIB);
    expect(kept.map((c) => c.length)).toEqual([2 * MIB, MIB]);
    expect(FILL_BYTE).not.toBe(0);
    for (const chunk of kept) expect(chunk.every((byte) => byte === FILL_BYTE)).toBe(true);
  });

  test('zero bytes: no allocation, no pause', async () => {
    const r = recorder();
    expect(await allocateResident(0, r)).toBe(0);
    expect(r.calls).toEqual([]);
  });

  test.each([-1, 1.5, Number.NaN])('rejects a total of %s', async (total) => {
    await expect(allocateResident(total, recorder())).rejects.toThrow(RangeError);
  });

  test('rejects a chunk size of 0 (it would never finish)', async () => {
    await expect(allocateResident(MIB, { ...recorder(), chunkBytes: 0 })).rejects.toThrow(RangeError);
  });
});
