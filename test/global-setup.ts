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

/** The project whose stack runs three Kubernetes clusters on one etcd (issue 33, docs/multi-cluster.md "Local stack"). */
export const MULTICLUSTER_PROJECT = 'multicluster';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The outage suites stop and freeze the stack's components, and the multicluster suites run three
  // clusters: each of those projects gets a stack of its own.
  const base = process.env.MODELDOCK_TEST_STACK_DIR ?? join(repoRoot, '.stack/test');
  const runDir = project.name === 'integration' ? base : `${base}-${project.name}`;
  const clusters = project.name === MULTICLUSTER_PROJECT ? 3 : 1;
  return runStack(runDir, () => startStack({ runDir, clusters, log: (m) => console.error(m) }), async (stack) => {
    // k8s/ as shipped on every cluster; the monitoring token is the first cluster's.
    const { metricsToken } = await installBase(stack.info, repoRoot, 24 * 3600);
    for (const c of stack.info.clusters.slice(1)) await installBase({ binDir: stack.info.binDir, kubeconfig: c.kubeconfig }, repoRoot, 24 * 3600);
    project.provide('stack', { ...stack.info, metricsToken });
  });
}
