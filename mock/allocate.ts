// MOCK_ALLOCATE_MIB: take N MiB of real, resident memory at start, so a container whose memory
// limit is lower is OOM-killed by the kernel (exit 137). Buffers live outside the V8 heap, so
// no JS heap limit fails first; every byte is written (non-zero), so every page is resident;
// a chunk at a time with a pause between, so the RSS climbs steadily instead of in one jump.
import { setTimeout as delay } from 'node:timers/promises';

export const MIB = 1024 * 1024;

/** Non-zero, so no page can stay the shared zero page. */
export const FILL_BYTE = 0xa5;

export type AllocateOptions = {
  /** Bytes per chunk (8 MiB). */
  chunkBytes?: number;
  /** Pause after each chunk but the last (5 ms). */
  pauseMs?: number;
  /** Allocates and writes one chunk. */
  alloc?: (bytes: number) => Buffer;
  pause?: (ms: number) => Promise<void>;
  /** Keeps a reference to each chunk; by default for the life of the process. */
  keep?: (chunk: Buffer) => void;
};

// Module scope: referenced for as long as the process runs, so the memory is never collected.
const resident: Buffer[] = [];

/** Allocates `totalBytes` in chunks; resolves with the number of bytes taken once all are written. */
export async function allocateResident(totalBytes: number, options: AllocateOptions = {}): Promise<number> {
  const {
    chunkBytes = 8 * MIB,
    pauseMs = 5,
    alloc = (bytes) => Buffer.alloc(bytes, FILL_BYTE),
    pause = (ms) => delay(ms),
    keep = (chunk) => void resident.push(chunk),
  } = options;
  if (!Number.isSafeInteger(totalBytes) || totalBytes < 0) throw new RangeError(`totalBytes must be an integer >= 0, got ${totalBytes}`);
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) throw new RangeError(`chunkBytes must be an integer >= 1, got ${chunkBytes}`);
  let taken = 0;
  while (taken < totalBytes) {
    const chunk = alloc(Math.min(chunkBytes, totalBytes - taken));
    keep(chunk);
    taken += chunk.length;
    if (taken < totalBytes) await pause(pauseMs);
  }
  return taken;
}
