// The `node` project's global setup: the local stack WITH its real node (a kubelet, containerd and
// kube-proxy in a network namespace of the stack's own; scripts/testenv/node.ts) and ModelDock's
// k8s/ installed as shipped. It is never skipped: a machine where the real node cannot start
// (not root, no network namespaces, a missing tool) fails the run with the component and the tail
// of its log. Teardown fails the run too if the host is not as the node found it.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { runStack } from './support/run-stack.ts';
import { installBase } from '../scripts/testenv/install.ts';
import { repoRoot, startStack } from '../scripts/testenv/stack.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = process.env.MODELDOCK_NODE_STACK_DIR ?? join(repoRoot, '.stack/test-node');
  return runStack(runDir, () => startStack({ runDir, log: (m) => console.error(m), realNode: true }), async (stack) => {
    const { metricsToken } = await installBase(stack.info, repoRoot, 24 * 3600);
    project.provide('stack', { ...stack.info, metricsToken });
  });
}
