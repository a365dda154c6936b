// Secured /metrics on a real controller process against the real API server: the bearer token
// is authenticated (TokenReview) and authorized (SubjectAccessReview, get /metrics) by the API
// server. No token → 401, a token the API server rejects → 401, a valid ServiceAccount token
// without the modeldock-metrics-reader role → 403, with it → 200; /healthz and /readyz stay open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { mintToken } from '../../scripts/testenv/install.ts';
import { metricSum, readMetrics, startController, type ControllerProcess } from '../support/controller-process.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';

const { kc, core } = kubeClients();
const admin = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
let ctl: ControllerProcess;
let noRoleToken: string;

beforeAll(async () => {
  ns = await createNamespace(core, 'metrics-sec');
  ctl = await startController('ctl-metrics', ns.name, { LEADER_ELECT: 'false' });
  await admin.create(`/api/v1/namespaces/${ns.name}/serviceaccounts`, { metadata: { name: 'curious' } });
  noRoleToken = await mintToken(admin, ns.name, 'curious', 600);
});
afterAll(async () => {
  await ctl?.proc.stop();
  await ns?.remove();
});

const get = async (path: string, token?: string) => {
  const res = await fetch(`http://127.0.0.1:${ctl.port}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: await res.text(), authenticate: res.headers.get('www-authenticate') };
};

describe('secured /metrics', () => {
  it('no token → 401 (WWW-Authenticate: Bearer)', async () => {
    expect(await get('/metrics')).toMatchObject({ status: 401, authenticate: 'Bearer' });
  });
  it('a token the API server does not accept → 401', async () => {
    expect((await get('/metrics', 'not-a-token')).status).toBe(401);
    const forged = `${noRoleToken.slice(0, -4)}AAAA`; // a ServiceAccount JWT with a broken signature
    expect((await get('/metrics', forged)).status).toBe(401);
  });
  it('a valid ServiceAccount token without the modeldock-metrics-reader role → 403', async () => {
    const r = await get('/metrics', noRoleToken);
    expect(r.status).toBe(403);
    expect(r.body).not.toContain('controller_runtime'); // nothing leaks
  });
  it('a token bound to modeldock-metrics-reader (k8s/monitoring) → 200 with the metrics', async () => {
    const text = await readMetrics(ctl.port, inject('stack').metricsToken);
    expect(text).toContain('# TYPE controller_runtime_reconcile_total counter');
    expect(metricSum(text, 'modeldock_informer_synced')).toBeGreaterThan(0);
  });
  it('/healthz and /readyz need no token', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
  });
});
