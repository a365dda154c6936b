// Readiness is the Service's, not only the Deployment's. With the EndpointSlice
// controller stopped (kube-controller-manager restarted without it), an admission's pod becomes
// Ready and its Deployment available, but no EndpointSlice lists an endpoint for its Service: the
// ModelService stays Progressing (Ready False, reason NoReadyEndpoints) and the tenant's
// admission stays `delivered` with no readyAt. Once the EndpointSlice controller is back, the
// slice lists the pod and the admission becomes ready.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_CONTROLLER } from '../../controller/reservation/setup.ts';
import { paths } from '../../controller/runtime/kube.ts';
import { componentHealthy } from '../../scripts/testenv/kube.ts';
import type { Deployment, EndpointSlice, ModelService } from '../../controller/modelservice/types.ts';
import { metricSum } from '../support/controller-process.ts';
import { securePort, stopStackProcess } from '../support/outage.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

const KCM = 'kube-controller-manager';
const ENDPOINTSLICE = ',endpointslice-controller';
/** Restarts kube-controller-manager with its `--controllers` list rewritten. */
async function restartControllerManager(rewrite: (controllers: string) => string): Promise<number> {
  const port = securePort(KCM);
  const stopped = await stopStackProcess(KCM, () => componentHealthy(port).catch(() => false));
  return stopped.start((args) => args.map((a) => (a.startsWith('--controllers=') ? `--controllers=${rewrite(a.slice('--controllers='.length))}` : a)));
}

let sys: System;
let ctl: ControllerProcess;
beforeAll(async () => {
  sys = await startSystem();
  // The ledger re-checks every open reservation each second: below, its reconciles (counted)
  // prove it looked at the not-Ready CR, instead of a wait of a few seconds.
  ctl = await sys.startController('ctl-endpoints', { LEDGER_RESYNC_MS: '1000' });
});
const ledgerReconciles = async () => metricSum(await ctl.metrics(), 'controller_runtime_reconcile_total', (l) => l.controller === LEDGER_CONTROLLER);
afterAll(async () => sys?.stop());

describe('readiness from EndpointSlices', () => {
  it('pods Ready and the Deployment available but no ready endpoint: not ready; ready once the slices list the pod', async () => {
    await restartControllerManager((c) => c.replace(ENDPOINTSLICE, ''));
    let restored = false;
    try {
      const [id] = await sys.admit(1, { image: 'ghcr.io/acme/model:1', resources: { cpu: '250m', memory: '256Mi' } });
      const name = `md-${id!.toLowerCase()}`;
      await waitFor('the Deployment available', async () => (await sys.kube.getOrUndefined<Deployment>(paths.deployment(sys.tenantNamespace, name)))?.status?.availableReplicas === 1, { timeoutMs: 60_000 });
      const msPath = `${paths.modelServices(sys.tenantNamespace)}/${name}`;
      const cr = await waitFor('the ModelService to say why it is not Ready', async () => {
        const ms = await sys.kube.getOrUndefined<ModelService>(msPath);
        return ms?.status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'NoReadyEndpoints' ? ms : undefined;
      });
      expect(cr.status).toMatchObject({ phase: 'Progressing', availableReplicas: 1 });
      expect(cr.status?.readyAt).toBeUndefined();
      const slices = await sys.kube.list<EndpointSlice>(paths.endpointSlices(sys.tenantNamespace), { labelSelector: `kubernetes.io/service-name=${name}` });
      expect(slices.items).toEqual([]);
      // The ledger saw the same CR and keeps it delivered: two reconciles completed since (the
      // only open reservation of this suite), so at least one read the CR as it is now.
      const reconciles0 = await ledgerReconciles();
      await waitFor('two more ledger reconciles of the not-Ready CR', async () => (await ledgerReconciles()) >= reconciles0 + 2, { timeoutMs: 20_000 });
      const seen = await sys.api(`/requests/${id}`);
      expect(seen.status).toBe(200);
      expect(seen.body).toMatchObject({ state: 'delivered', timeline: { readyAt: null, startedAt: expect.any(String) } });

      const back = await restartControllerManager((c) => c + ENDPOINTSLICE);
      restored = true;
      const [ready] = await sys.untilState([id!], 'ready', 60_000);
      const readyAt = (ready?.timeline as { readyAt: string | null } | undefined)?.readyAt;
      expect(readyAt).toEqual(expect.any(String));
      expect(Date.parse(readyAt!)).toBeGreaterThanOrEqual(back - 1000);
      const served = await sys.kube.list<EndpointSlice>(paths.endpointSlices(sys.tenantNamespace), { labelSelector: `kubernetes.io/service-name=${name}` });
      expect(served.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready)).toHaveLength(1);
      expect((await sys.kube.get<ModelService>(msPath)).status?.phase).toBe('Running');
      expect(await sys.check()).toEqual([]);
    } finally {
      if (!restored) await restartControllerManager((c) => (c.includes(ENDPOINTSLICE) ? c : c + ENDPOINTSLICE));
    }
  });
});
