// `npm run stack`: starts the local stack for a person and keeps it up until Ctrl-C.
// Prints how to reach it; everything is torn down on exit.
import { join } from 'node:path';
import { repoRoot, startStack } from './testenv/stack.ts';

const runDir = process.env.MODELDOCK_STACK_DIR ?? join(repoRoot, '.stack/dev');
const stack = await startStack({ runDir }).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
const { info } = stack;
console.log(`
ModelDock local stack is up. In another shell:

  export KUBECONFIG=${info.kubeconfig} PATH=${info.binDir}:$PATH
  kubectl get nodes
  DATABASE_URL=${info.databaseUrl}     # @planetscale/database connect({ url })
  mariadb -h127.0.0.1 -P${info.mysql.port} -u${info.mysql.user} -p${info.mysql.password} ${info.database}

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
