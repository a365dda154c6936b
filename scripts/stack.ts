// `npm run stack`: starts the local stack for a person and keeps it up until Ctrl-C.
// Prints how to reach it; everything is torn down on exit. A real node (kubelet + containerd)
// joins wherever the machine allows it (Linux, root), KWOK's fake node always; `--kwok` or
// `--real-node` (or MODELDOCK_NODE=kwok|real) forces the choice. `--clusters N` (up to 3) starts
// N Kubernetes clusters on one etcd (docs/multi-cluster.md, "Local stack"); the real node joins c1.
import { join } from 'node:path';
import { chooseNode, type NodeChoice } from './testenv/node-choice.ts';
import { REAL_NODE_LABEL } from './testenv/node-config.ts';
import { repoRoot, startStack } from './testenv/stack.ts';
import { clusterCount } from './testenv/cluster-count.ts';

const runDir = process.env.MODELDOCK_STACK_DIR ?? join(repoRoot, '.stack/dev');
let node: NodeChoice;
let clusters: number;
try {
  node = chooseNode({ platform: process.platform, uid: process.getuid?.(), argv: process.argv.slice(2), env: process.env.MODELDOCK_NODE });
  clusters = clusterCount(process.argv.slice(2));
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
console.log(`[stack] node: ${node.why}`);
const stack = await startStack({ runDir, realNode: node.kind === 'real', clusters }).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
const { info } = stack;
console.log(`
ModelDock local stack is up. In another shell:

  export KUBECONFIG=${info.kubeconfig} PATH=${info.binDir}:$PATH
  kubectl get nodes          # ${info.realNode ? `${info.realNode.name} (real: kubelet + containerd; tainted ${REAL_NODE_LABEL}=true:NoSchedule, so only pods that tolerate it land there) and ` : ''}kwok-node-0 (fake)
  DATABASE_URL=${info.databaseUrl}     # @planetscale/database connect({ url })
  mariadb -h127.0.0.1 -P${info.mysql.port} -u${info.mysql.user} -p${info.mysql.password} ${info.database}

${(info.clusters.length > 1 ? info.clusters : []).map((c) => `  kubectl --kubeconfig ${c.kubeconfig} get nodes     # cluster ${c.name}`).join('\n')}
State and logs: ${info.runDir}  (stack.json, logs/)
Press Ctrl-C to stop.`);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the local stack…`);
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
setInterval(() => {}, 1 << 30); // keep the event loop alive
