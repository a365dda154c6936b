// The `vitess` project's global setup: the ledger backends only (no Kubernetes) — the shared
// MariaDB for per-test databases and ONE sharded Vitess ledger per run (migrated once; suites
// keep apart by unique tenant names, test/support/vitess.ts). A backend that cannot start
// fails the run with the component and the tail of its log.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { runStack } from './support/run-stack.ts';
import { repoRoot, startLedgerStack, type LedgerStackInfo } from '../scripts/testenv/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    ledgerStack: LedgerStackInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = process.env.MODELDOCK_VITESS_STACK_DIR ?? join(repoRoot, '.stack/vitess');
  return runStack(runDir, () => startLedgerStack({ runDir, log: (m) => console.error(m) }), async (stack) => project.provide('ledgerStack', stack.info));
}
