// What every service gets injected: the database, a clock and an id generator.
import { monotonicFactory } from 'ulid';
import type { Db } from '../../ledger/db.ts';
import type { Placer } from '../../ledger/placement.ts';

export interface ServiceDeps {
  db: Db;
  clock: () => Date;
  /** A new admission id (ULID) for the given time. */
  newId: (now: Date) => string;
  /** Where admissions go (ledger/placement.ts): one per isolate, its caches shared by the requests. */
  placer: Placer;
}

const prng = () => (crypto.getRandomValues(new Uint8Array(1))[0] ?? 0) / 256;

/** Monotonic ULIDs within this isolate (ids of one millisecond still sort by creation). */
export function ulidGenerator(): (now: Date) => string {
  let factory: ReturnType<typeof monotonicFactory> | undefined;
  return (now) => (factory ??= monotonicFactory(prng))(now.getTime());
}
