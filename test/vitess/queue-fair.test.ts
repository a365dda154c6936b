// The cross-tenant fair pick of freed cluster room (issue 30) on the 2-shard Vitess ledger (vtgate
// behind ps-http-sim, transaction mode SINGLE: a dequeue or a bypass count that reached a second
// shard would fail here); the tenants of a case share one shard's room. The same cases as the
// MariaDB suite (test/integration/queue-fair.test.ts): test/support/fair-queue-scenarios.ts.
import { beforeAll } from 'vitest';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { fairQueueScenarios } from '../support/fair-queue-scenarios.ts';

let L: LedgerDatabase;
beforeAll(async () => {
  L = await createLedgerDatabase();
  if (L.backend !== 'vitess') throw new Error('test/vitess/queue-fair.test.ts runs in the vitess project (MODELDOCK_LEDGER_BACKEND=vitess)');
});

fairQueueScenarios({ ledger: () => L });
