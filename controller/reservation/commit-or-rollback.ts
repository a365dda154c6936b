// A transaction whose body may decide that nothing should be written: `rollback(outcome)` rolls
// the whole transaction back and the call answers `outcome` instead of throwing. Any other error
// rolls back and is thrown as before (Db.transaction, ledger/db.ts).
import type { Db, Queryable } from '../../ledger/db.ts';

/** Rolls the transaction back; the transaction answers `outcome`. */
export type Rollback<R> = (outcome: R) => never;

/** Carries a rollback's outcome through Db.transaction (which rolls back on any throw). */
class RolledBack extends Error {
  readonly call: object;
  readonly outcome: unknown;
  constructor(call: object, outcome: unknown) {
    super('rolled back');
    this.call = call;
    this.outcome = outcome;
  }
}

/**
 * Runs `body` in one transaction: COMMIT and its result when it returns, ROLLBACK and the outcome
 * it passed when it calls `rollback`. The rollback belongs to this call: another transaction's
 * rollback thrown through `body` is not taken for it.
 */
export async function commitOrRollback<T, R>(db: Db, body: (tx: Queryable, rollback: Rollback<R>) => Promise<T>): Promise<T | R> {
  const call = {};
  const rollback: Rollback<R> = (outcome) => {
    throw new RolledBack(call, outcome);
  };
  try {
    return await db.transaction((tx) => body(tx, rollback));
  } catch (err) {
    if (err instanceof RolledBack && err.call === call) return err.outcome as R;
    throw err;
  }
}
