// Starts the real local stack ONCE per test run and hands its coordinates to every test
// file through vitest's provide/inject. A stack that cannot start fails the run with the
// component and the tail of its log — integration tests are never skipped.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { runStack } from './support/run-stack.ts';
import { installBase } from '../scripts/testenv/install.ts';
import { repoRoot, startStack, type StackInfo } from '../scripts/testenv/stack.ts';

/** The stack, with ModelDock's k8s/ installed as shipped, and a token that may read controllers' /metrics. */
export interface TestStack extends StackInfo {
  /** Token of system:serviceaccount:modeldock-monitoring:metrics-scraper (bound to modeldock-metrics-reader). */
  metricsToken: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: TestStack;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The outage suites stop and freeze the stack's components: their project gets a stack of its own.
  const base = process.env.MODELDOCK_TEST_STACK_DIR ?? join(repoRoot, '.stack/test');
  const runDir = project.name === 'integration' ? base : `${base}-${project.name}`;
  return runStack(runDir, () => startStack({ runDir, log: (m) => console.error(m) }), async (stack) => {
    const { metricsToken } = await installBase(stack.info, repoRoot, 24 * 3600);
    project.provide('stack', { ...stack.info, metricsToken });
  });
}
