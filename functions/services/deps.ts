// What every service gets injected: the database, a clock and an id generator.
import { monotonicFactory } from 'ulid';
import type { Db } from '../../ledger/db.ts';

export interface ServiceDeps {
  db: Db;
  clock: () => Date;
  /** A new admission id (ULID) for the given time. */
  newId: (now: Date) => string;
}

const prng = () => (crypto.getRandomValues(new Uint8Array(1))[0] ?? 0) / 256;

/** Monotonic ULIDs within this isolate (ids of one millisecond still sort by creation). */
export function ulidGenerator(): (now: Date) => string {
  let factory: ReturnType<typeof monotonicFactory> | undefined;
  return (now) => (factory ??= monotonicFactory(prng))(now.getTime());
}
