// The queue (issue 30) at the service level on MariaDB behind ps-http-sim, with the production
// driver: FIFO positions, nothing passing the queue, the bounded bypass, cancel, cancel-vs-dequeue
// races, TTL expiry, a crash inside the dequeue transaction, and an admission that never fits. The
// cases are test/support/queue-scenarios.ts; test/vitess/queue.test.ts runs them on Vitess.
import { afterAll, beforeAll } from 'vitest';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { queueScenarios } from '../support/queue-scenarios.ts';

let L: LedgerDatabase;
beforeAll(async () => {
  L = await createLedgerDatabase();
});
afterAll(async () => L?.drop());

queueScenarios({ ledger: () => L, raceRounds: 200 });
