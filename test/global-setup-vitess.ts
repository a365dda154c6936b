// The `vitess` project's global setup: the ledger backends only (no Kubernetes) — the shared
// MariaDB for per-test databases and ONE sharded Vitess ledger per run (migrated once; suites
// keep apart by unique tenant names, test/support/vitess.ts). A backend that cannot start
// fails the run with the component and the tail of its log.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { killLeftovers } from '../scripts/testenv/proc.ts';
import { repoRoot, startLedgerStack, type LedgerStackInfo } from '../scripts/testenv/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    ledgerStack: LedgerStackInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = process.env.MODELDOCK_VITESS_STACK_DIR ?? join(repoRoot, '.stack/vitess');
  const stack = await startLedgerStack({ runDir, log: (m) => console.error(m) });
  const killAll = () => killLeftovers(runDir);
  process.once('exit', killAll);
  project.provide('ledgerStack', stack.info);
  return async () => {
    await stack.stop();
    killAll();
    process.removeListener('exit', killAll);
  };
}
