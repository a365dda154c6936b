// `npm run dev`: the whole of ModelDock on this machine, for a person. Starts the local stack
// (MariaDB + ps-http-sim + Kubernetes control plane with a KWOK node), applies the migrations
// and a demo tenant, writes .dev.vars, serves the tenant API with `wrangler dev` on
// 127.0.0.1:8787, installs k8s/ as shipped (`kubectl apply --server-side -k k8s`, plus the
// k8s/monitoring example), creates the database Secret, and runs the controller as its
// ServiceAccount (a TokenRequest token in its own kubeconfig). On the real node the inference
// gateway (k8s/gateway) runs there too, with a fresh credential key shared with the Worker
// (.dev.vars), so the tenant calls its model through the API. Prints a curl session; Ctrl-C
// tears everything down. `--clusters 3` (issue 33): three Kubernetes clusters c1–c3 on one etcd,
// each registered in the ledger (`npm run cluster -- add`), installed, and served by its own
// controller (CLUSTER=c<i>, its own ServiceAccount token, metrics on 8080 + i - 1); admissions are
// placed among them in the charging transaction. The real node, when chosen, joins c1.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDb } from '../ledger/db.ts';
import { migrate } from '../ledger/migrate.ts';
import { setTenantQuota, parseLimits } from './tenant.ts';
import { GATEWAY_DEPLOYMENT, gatewayPlacementPatch, startNodeGateway } from './testenv/gateway.ts';
import { adminClient, BASE_NAMESPACE, controllerCredentials, createDatabaseSecret, GATEWAY_NAMESPACE, installBase } from './testenv/install.ts';
import { startProcess, type ManagedProcess } from './testenv/proc.ts';
import { chooseNode, NODE_FLAGS, type NodeChoice } from './testenv/node-choice.ts';
import { REAL_NODE_PLACEMENT, REAL_NODE_TENANT_NETWORK } from './testenv/node-config.ts';
import { repoRoot, startStack, type StackCluster } from './testenv/stack.ts';
import { clusterCount } from './testenv/cluster-count.ts';
import { addCluster } from './operator/cluster-admin.ts';
import { tenantNamespace } from '../schema/tenant-namespace.ts';

const TENANT = 'demo';
const KEY = process.env.MODELDOCK_DEMO_KEY ?? 'demo-key-change-me-0123456789';
/** The controller's token lives a week (a kubelet would refresh it; restart `npm run dev` after that). */
const TOKEN_SECONDS = 7 * 24 * 3600;
const API_PORT = Number(process.env.API_PORT ?? 8787);
/** The controller's copy of the image policy: wrangler.toml's ALLOWED_IMAGE_REGISTRIES (the demo's mock model). */
const DEV_REGISTRIES = 'docker.io/modeldock';

/** Each cluster of `--clusters N`: what the demo's ledger registers (4 ModelServices each, so placement spreads). */
const DEV_CLUSTER_CAPACITY = { cpu: 8000, memory: 32 * 1024, 'nvidia.com/gpu': 0, modelservices: 4 };
const DEV_CLUSTER_LEASE_MS = 10_000;

const runDir = process.env.MODELDOCK_STACK_DIR ?? join(repoRoot, '.stack/dev');
const node = nodeChoiceOrExit();
const clusters = countOrExit();
console.log(`[dev] node: ${node.why}${clusters > 1 ? `; ${clusters} clusters` : ''}`);
const stack = await startStack({ runDir, realNode: node.kind === 'real', clusters }).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
const { info } = stack;
const extra: ManagedProcess[] = [];
let stopping = false;
const shutdown = async (code: number) => {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping ModelDock…');
  await Promise.all(extra.map((p) => p.stop()));
  await stack.stop();
  process.exit(code);
};
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

try {
  const db = createDb({ url: info.databaseUrl });
  await migrate(db);
  await setTenantQuota(db, TENANT, parseLimits(['cpu=8', 'memory=32Gi', 'nvidia.com/gpu=2']));

  // The install a user makes (docs/local-stack.md): k8s/, then the database Secret; on every cluster.
  const installed: InstalledCluster[] = [];
  for (const c of info.clusters) installed.push(await installCluster(c, db));
  // The gateway on the real node (the operator's placement; one replica: the node has 2 cores for
  // the demo's model too), then its key Secret; KWOK runs no gateway.
  let gatewayVars: Record<string, string> = {};
  if (info.realNode) {
    await adminClient(info.kubeconfig).mergePatch(`/apis/apps/v1/namespaces/${GATEWAY_NAMESPACE}/deployments/${GATEWAY_DEPLOYMENT}`, gatewayPlacementPatch(1));
    gatewayVars = (await startNodeGateway(info.kubeconfig, GATEWAY_NAMESPACE)).workerVars;
  }
  const vars = { DATABASE_URL: info.databaseUrl, ADMISSION_KEYS_JSON: JSON.stringify({ [TENANT]: KEY }), MODELDOCK_ENV: 'development', ...gatewayVars };
  writeFileSync(join(repoRoot, '.dev.vars'), Object.entries(vars).map(([k, v]) => `${k}=${v}\n`).join(''), { mode: 0o600 });
  const [first] = installed;
  if (!first) throw new Error('no cluster installed');

  const api = `http://127.0.0.1:${API_PORT}`;
  extra.push(
    await startProcess(
      {
        name: 'wrangler',
        command: join(repoRoot, 'node_modules/.bin/wrangler'),
        args: ['dev', '--ip=127.0.0.1', `--port=${API_PORT}`, '--test-scheduled', '--show-interactive-dev-session=false'],
        cwd: repoRoot,
        env: { WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
        logDir: info.logDir,
        ready: async () => (await fetch(`${api}/healthz`)).ok,
        timeoutMs: 90_000,
      },
      info.runDir,
    ),
  );
  // One controller per cluster, as its own ServiceAccount; with several, each serves its cluster (CLUSTER).
  for (const [i, c] of installed.entries()) extra.push(await startController(c, i, clusters > 1));

  console.log(`
ModelDock is running. Tenant "${TENANT}" (cpu=8, memory=32Gi, nvidia.com/gpu=2), key in .dev.vars.

  Dashboard: ${api}/  (paste the key ${KEY})

  export MODELDOCK_URL=${api} MODELDOCK_KEY=${KEY}
  npx modeldock submit --name chat --image modeldock/mock-model:0.1.0 --replicas 2 --cpu 500m --memory 1Gi --wait
  npx modeldock list; npx modeldock quota; npx modeldock scale <id> 3 --wait; npx modeldock delete <id> --wait

  Or with curl:

  K="Authorization: Bearer ${KEY}"
  curl -s -XPOST ${api}/requests -H "$K" -H 'Content-Type: application/json' -H 'Idempotency-Key: demo-1' \\
       -d '{"name":"chat","image":"modeldock/mock-model:0.1.0","replicas":2,"resources":{"cpu":"500m","memory":"1Gi"}}'
  curl -s ${api}/requests -H "$K"            # list (state: admitted → delivered → ready)
  curl -s ${api}/requests/<id> -H "$K"       # one admission, with its endpoint
  curl -s -XPATCH ${api}/requests/<id> -H "$K" -H 'Content-Type: application/json' -H 'Idempotency-Key: demo-scale-3' \\
       -d '{"replicas":3}'                  # scale: charged at once (a decrease: refunded once its pods are gone)
  curl -s ${api}/quota -H "$K"               # hard / reserved / active / releasing / blocked
  curl -s -XDELETE ${api}/requests/<id> -H "$K"

  export KUBECONFIG=${info.kubeconfig} PATH=${info.binDir}:$PATH
  kubectl -n ${tenantNamespace(TENANT)} get msvc -w        # the tenant's namespace: Pending → Progressing → Running
  curl -s http://127.0.0.1:8080/metrics -H "Authorization: Bearer $(cat ${first.metricsTokenFile})"   # controller metrics
  DATABASE_URL=${info.databaseUrl} npm run ledger:check
${clusters > 1 ? clustersHelp(installed, info.databaseUrl, info.binDir) : ''}
The controller runs as system:serviceaccount:${BASE_NAMESPACE}:modeldock-controller (${first.controllerKubeconfig}).
Node: ${node.why}.
${info.realNode ? streamCommand(api) : `  (KWOK's pods run nothing: start with ${NODE_FLAGS.real} as root on Linux to stream tokens from a real pod.)`}

Logs: ${info.logDir}   Press Ctrl-C to stop.`);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  await shutdown(1);
}
setInterval(() => {}, 1 << 30); // keep running until a signal

interface InstalledCluster extends StackCluster {
  controllerKubeconfig: string;
  metricsTokenFile: string;
}

/** k8s/ and the database Secret on one cluster, its controller's credentials, and (with several clusters) its registration in the ledger. */
async function installCluster(c: StackCluster, db: ReturnType<typeof createDb>): Promise<InstalledCluster> {
  const target = { binDir: info.binDir, kubeconfig: c.kubeconfig };
  const { dir } = c;
  const { metricsToken } = await installBase(target, repoRoot, TOKEN_SECONDS);
  await createDatabaseSecret(target, BASE_NAMESPACE, info.databaseUrl);
  const metricsTokenFile = join(dir, 'metrics-token');
  writeFileSync(metricsTokenFile, metricsToken, { mode: 0o600 });
  const controller = await controllerCredentials(target, BASE_NAMESPACE, join(dir, 'controller.kubeconfig'), TOKEN_SECONDS);
  if (clusters > 1) await addCluster({ db, actor: 'npm run dev', now: () => new Date() }, { name: c.name, capacity: DEV_CLUSTER_CAPACITY, leaseMs: DEV_CLUSTER_LEASE_MS, reason: 'local stack' });
  return { ...c, controllerKubeconfig: controller.kubeconfig, metricsTokenFile };
}

/** The controller of cluster `i` (metrics on 8080 + i); with several clusters it takes its cluster over (CLUSTER). */
function startController(c: InstalledCluster, i: number, several: boolean): Promise<ManagedProcess> {
  const port = 8080 + i;
  // On the real node (c1): the operator's placement settings put the tenant pods there.
  const onNode = info.realNode && i === 0 ? { ...REAL_NODE_PLACEMENT, ...REAL_NODE_TENANT_NETWORK } : {};
  return startProcess(
    {
      name: several ? `${c.name}-controller` : 'controller',
      command: process.execPath,
      args: [join(repoRoot, 'controller/main.ts')],
      cwd: repoRoot,
      env: { KUBECONFIG: c.controllerKubeconfig, NAMESPACE: BASE_NAMESPACE, DATABASE_URL: info.databaseUrl, METRICS_PORT: String(port), ALLOWED_IMAGE_REGISTRIES: DEV_REGISTRIES, ...(several ? { CLUSTER: c.name } : {}), ...onNode },
      logDir: info.logDir,
      ready: async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
      timeoutMs: 60_000,
    },
    info.runDir,
  );
}

function clustersHelp(installed: readonly InstalledCluster[], databaseUrl: string, binDir: string): string {
  return `
  Clusters (each admission is placed on one, in the charging transaction):
  DATABASE_URL=${databaseUrl} npm run cluster -- list
${installed.map((c, i) => `  ${binDir}/kubectl --kubeconfig ${c.kubeconfig} get msvc -A -w     # ${c.name}; its controller's metrics on :${8080 + i}`).join('\n')}
`;
}

function countOrExit(): number {
  try {
    return clusterCount(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
}

function nodeChoiceOrExit(): NodeChoice {
  try {
    return chooseNode({ platform: process.platform, uid: process.getuid?.(), argv: process.argv.slice(2), env: process.env.MODELDOCK_NODE });
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
}

/** The last command of the session: tokens streamed from the tenant's model on the real node, through the API and the gateway. */
function streamCommand(api: string): string {
  return `  Tokens from the model, streamed by its real pod through the API and the gateway (after the submit above is ready):

  npx modeldock chat <id> "hello"
  curl -N ${api}/v1/models/<id>/chat/completions -H "$K" -H 'Content-Type: application/json' \\
       -d '{"model":"mock-model","messages":[{"role":"user","content":"hello"}],"stream":true,"max_tokens":24}'`;
}
