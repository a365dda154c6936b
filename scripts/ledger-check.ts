// `npm run ledger:check`: reports drift between the MySQL ledger and the cluster, one JSON
// line per finding; exits 1 when there is any. Env: DATABASE_URL (or .dev.vars), KUBECONFIG
// (or ~/.kube/config / in-cluster), NAMESPACE (default modeldock-lab).
import { KubeConfig } from '@kubernetes/client-node';
import { createDb } from '../ledger/db.ts';
import { checkLedger } from './operator/check.ts';
import { KubeClient } from '../controller/runtime/kube.ts';
import { databaseUrlFromEnv } from './database-url.ts';

const kc = new KubeConfig();
if (process.env.KUBECONFIG) kc.loadFromFile(process.env.KUBECONFIG);
else kc.loadFromDefault();
const namespace = process.env.NAMESPACE ?? 'modeldock-lab';
const drift = await checkLedger(createDb({ url: databaseUrlFromEnv() }), new KubeClient({ kc }), namespace);
for (const d of drift) console.log(JSON.stringify(d));
console.error(drift.length === 0 ? `ledger:check: no drift (namespace ${namespace})` : `ledger:check: ${drift.length} finding(s)`);
process.exit(drift.length === 0 ? 0 : 1);
