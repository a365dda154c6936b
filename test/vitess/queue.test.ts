// The queue (issue 30) at the service level on the 2-shard Vitess ledger (vtgate behind
// ps-http-sim, transaction mode SINGLE: a dequeue, enqueue or cancel transaction that reached a
// second shard would fail here). The same cases as the MariaDB suite
// (test/integration/admission-queue.test.ts): test/support/queue-scenarios.ts. The project runs
// with MODELDOCK_LEDGER_BACKEND=vitess, so createLedgerDatabase gives the run's Vitess ledger,
// emptied for this suite; tenant names are random, so the cases land on both shards.
import { beforeAll } from 'vitest';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { queueScenarios } from '../support/queue-scenarios.ts';

let L: LedgerDatabase;
beforeAll(async () => {
  L = await createLedgerDatabase();
  if (L.backend !== 'vitess') throw new Error('test/vitess/queue.test.ts runs in the vitess project (MODELDOCK_LEDGER_BACKEND=vitess)');
});

queueScenarios({ ledger: () => L, raceRounds: 200 });
