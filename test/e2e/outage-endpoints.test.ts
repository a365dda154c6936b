// Issue 14, item 3: readiness is the Service's, not only the Deployment's. With the EndpointSlice
// controller stopped (kube-controller-manager restarted without it), an admission's pod becomes
// Ready and its Deployment available, but no EndpointSlice lists an endpoint for its Service: the
// ModelService stays Progressing (Ready False, reason NoReadyEndpoints) and the tenant's
// admission stays `delivered` with no readyAt. Once the EndpointSlice controller is back, the
// slice lists the pod and the admission becomes ready.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import { componentHealthy } from '../../scripts/testenv/kube.ts';
import type { Deployment, EndpointSlice, ModelService } from '../../controller/modelservice/types.ts';
import { securePort, stopStackProcess } from '../support/outage.ts';
import { startSystem, type System } from '../support/system.ts';
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
beforeAll(async () => {
  sys = await startSystem();
  await sys.startController('ctl-endpoints');
});
afterAll(async () => sys?.stop());

describe('readiness from EndpointSlices', () => {
  it('pods Ready and the Deployment available but no ready endpoint: not ready; ready once the slices list the pod', async () => {
    await restartControllerManager((c) => c.replace(ENDPOINTSLICE, ''));
    let restored = false;
    try {
      const [id] = await sys.admit(1, { image: 'ghcr.io/acme/model:1', resources: { cpu: '250m', memory: '256Mi' } });
      const name = `md-${id!.toLowerCase()}`;
      await waitFor('the Deployment available', async () => (await sys.kube.getOrUndefined<Deployment>(paths.deployment(sys.namespace, name)))?.status?.availableReplicas === 1, { timeoutMs: 60_000 });
      const msPath = `${paths.modelServices(sys.namespace)}/${name}`;
      const cr = await waitFor('the ModelService to say why it is not Ready', async () => {
        const ms = await sys.kube.getOrUndefined<ModelService>(msPath);
        return ms?.status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'NoReadyEndpoints' ? ms : undefined;
      });
      expect(cr.status).toMatchObject({ phase: 'Progressing', availableReplicas: 1 });
      expect(cr.status?.readyAt).toBeUndefined();
      const slices = await sys.kube.list<EndpointSlice>(paths.endpointSlices(sys.namespace), { labelSelector: `kubernetes.io/service-name=${name}` });
      expect(slices.items).toEqual([]);
      // The ledger saw the same CR: it stays delivered (checked over a few seconds of events).
      for (let i = 0; i < 3; i++) {
        const a = (await sys.api(`/requests/${id}`)).body as { state: string; timeline: { readyAt: string | null; startedAt: string | null } };
        expect(a.state).toBe('delivered');
        expect(a.timeline.readyAt).toBeNull();
        await sleep(1000);
      }

      const back = await restartControllerManager((c) => c + ENDPOINTSLICE);
      restored = true;
      const ready = await waitFor('the admission to be ready', async () => {
        const a = (await sys.api(`/requests/${id}`)).body as { state: string; timeline: { readyAt: string | null } };
        return a.state === 'ready' ? a : undefined;
      }, { timeoutMs: 60_000 });
      expect(Date.parse(ready.timeline.readyAt!)).toBeGreaterThanOrEqual(back - 1000);
      const served = await sys.kube.list<EndpointSlice>(paths.endpointSlices(sys.namespace), { labelSelector: `kubernetes.io/service-name=${name}` });
      expect(served.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready)).toHaveLength(1);
      expect((await sys.kube.get<ModelService>(msPath)).status?.phase).toBe('Running');
      expect(await sys.check()).toEqual([]);
    } finally {
      if (!restored) await restartControllerManager((c) => (c.includes(ENDPOINTSLICE) ? c : c + ENDPOINTSLICE));
    }
  });
});
