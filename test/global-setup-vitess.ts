// The `vitess` project's global setup: the whole local stack (Kubernetes, the shared MariaDB for
// per-test databases, ModelDock's k8s/ installed) plus ONE sharded Vitess ledger per run, migrated
// once. The ledger suites of BOTH_BACKENDS (vitest.config.ts) run here on that ledger
// (MODELDOCK_LEDGER_BACKEND=vitess: each suite empties it, one suite at a time); the test/vitess/
// suites keep apart by unique tenant names (test/support/vitess.ts). A component that cannot
// start fails the run with the component and the tail of its log.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { runStack } from './support/run-stack.ts';
import { installBase } from '../scripts/testenv/install.ts';
import { repoRoot, startStack, type VitessStackInfo } from '../scripts/testenv/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    ledgerStack: VitessStackInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = process.env.MODELDOCK_VITESS_STACK_DIR ?? join(repoRoot, '.stack/vitess');
  return runStack(runDir, () => startStack({ runDir, log: (m) => console.error(m), vitess: true }), async (stack) => {
    const vitess = stack.info.vitess;
    if (!vitess) throw new Error('unreachable: the Vitess ledger was requested');
    const { metricsToken } = await installBase(stack.info, repoRoot, 24 * 3600);
    project.provide('stack', { ...stack.info, metricsToken });
    project.provide('ledgerStack', { ...stack.info, vitess });
  });
}
