// Readiness that never passes, on a real container: the kubelet's probe fails, so the pod is
// started but not ready and its address is listed not-ready in the EndpointSlice; the tenant's
// timeline has `started` and no `ready`. The never-Ready deadline (shortened here by the
// controller's READY_DEADLINE_MS, as an operator would set it) deletes the ModelService with
// preconditions, and the charge is released exactly once, after the container is gone.
import { DiscoveryV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeClients } from '../support/kube.ts';
import { mockAdmission, onRealNode, podsOf, useNodeSystem } from '../support/real-node.ts';
import { waitFor } from '../support/wait.ts';

const DEADLINE_MS = 30_000;
const system = useNodeSystem({ controllerEnv: { READY_DEADLINE_MS: String(DEADLINE_MS) } });

describe('a model whose readiness never passes', () => {
  it('started but not ready, not-ready in the EndpointSlice; deleted at the deadline and released once', async () => {
    const [id] = await system().admit(1, mockAdmission({ name: 'never-ready', env: [{ name: 'MOCK_NEVER_READY', value: 'true' }] }));
    const discovery = kubeClients().kc.makeApiClient(DiscoveryV1Api);
    const name = `md-${id!.toLowerCase()}`;

    // started, not ready: the real kubelet ran the container, and its probe keeps failing.
    const pod = await waitFor('the container running, not ready', async () => {
      const pods = await podsOf(system().tenantNamespace, id!);
      const cs = pods[0]?.status?.containerStatuses?.[0];
      return cs?.state?.running && cs.ready === false && (cs.started ?? true) ? pods[0] : undefined;
    }, { timeoutMs: 90_000 });
    expect(onRealNode([pod])).toBe(true);
    const slice = await waitFor('the pod listed not-ready in the EndpointSlice', async () => {
      const slices = await discovery.listNamespacedEndpointSlice({ namespace: system().tenantNamespace, labelSelector: `kubernetes.io/service-name=${name}` });
      const ep = slices.items.flatMap((s) => s.endpoints ?? []).find((e) => e.addresses.includes(pod.status!.podIP!));
      return ep ?? undefined;
    }, { timeoutMs: 30_000 });
    expect(slice.conditions?.ready).toBe(false);

    // The tenant's timeline: started (the controller records it on its next look), never ready.
    const body = await waitFor('the timeline has started', async () => {
      const r = await system().api(`/requests/${id!}`);
      expect(r.status).toBe(200);
      return (r.body.timeline as Record<string, unknown>).startedAt ? r.body : undefined;
    }, { timeoutMs: 30_000 });
    expect(body.timeline).toMatchObject({ readyAt: null });
    expect(body.state).toBe('delivered');

    // The deadline: deleted with preconditions (uid, resourceVersion), then released once its pod is gone.
    await system().untilState([id!], 'released', DEADLINE_MS + 120_000);
    const after = (await system().api(`/requests/${id!}`)).body;
    expect(String(after.lastError)).toMatch(/never Ready within 30000 ms/);
    expect(after.timeline).toMatchObject({ readyAt: null });
    expect(await podsOf(system().tenantNamespace, id!)).toEqual([]);
    const moves = await system().ledger.db.execute('SELECT direction FROM quota_movement WHERE reservation_id = ? ORDER BY direction', [id!]);
    expect(moves.rows.map((r) => (r as { direction: string }).direction)).toEqual(['charge', 'release']);
  }, 300_000);
});
