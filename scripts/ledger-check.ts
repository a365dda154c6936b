// `npm run ledger:check`: reports drift between the MySQL ledger and the cluster, one JSON
// line per finding; exits 1 when there is any. Env: DATABASE_URL (or .dev.vars), KUBECONFIG
// (or ~/.kube/config / in-cluster), INSTANCE (the controller's, if it runs with one: only that
// installation's ModelServices and pods are compared; default every one in the cluster).
import { KubeConfig } from '@kubernetes/client-node';
import { createDb } from '../ledger/db.ts';
import { checkLedger } from './operator/check.ts';
import { KubeClient } from '../controller/runtime/kube.ts';
import { databaseUrlFromEnv } from './database-url.ts';

const kc = new KubeConfig();
if (process.env.KUBECONFIG) kc.loadFromFile(process.env.KUBECONFIG);
else kc.loadFromDefault();
const instance = process.env.INSTANCE || undefined;
const drift = await checkLedger(createDb({ url: databaseUrlFromEnv() }), new KubeClient({ kc }), instance);
for (const d of drift) console.log(JSON.stringify(d));
console.error(drift.length === 0 ? `ledger:check: no drift${instance ? ` (instance ${instance})` : ''}` : `ledger:check: ${drift.length} finding(s)`);
process.exit(drift.length === 0 ? 0 : 1);
