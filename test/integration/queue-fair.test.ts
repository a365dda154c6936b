// The cross-tenant fair pick of freed cluster room (issue 30) on MariaDB behind ps-http-sim; the
// same cases run on the 2-shard Vitess ledger (test/vitess/queue-fair.test.ts):
// test/support/fair-queue-scenarios.ts.
import { beforeAll } from 'vitest';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { fairQueueScenarios } from '../support/fair-queue-scenarios.ts';

let L: LedgerDatabase;
beforeAll(async () => {
  L = await createLedgerDatabase();
});

fairQueueScenarios({ ledger: () => L });
