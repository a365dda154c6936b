// The generated CRD on the real API server: server-side dry run, the served schema is the
// generator's, `kubectl explain` shows the descriptions, validation and defaults are enforced,
// printer columns and the scale subresource exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../controller/runtime/kube.ts';
import { buildCrd } from '../../schema/crd.ts';
import type { ModelService } from '../../schema/model-service.ts';
import { makeModelService } from '../support/builders.ts';
import { createNamespace, kubeClients } from '../support/kube.ts';
import { CRD_FILE, ensureCrd, kubectl, ops } from '../support/operator.ts';
import { waitFor } from '../support/wait.ts';

const { kc, core } = kubeClients();
const client = new KubeClient({ kc });
let ns: { name: string; remove(): Promise<void> };
beforeAll(async () => {
  ns = await createNamespace(core, 'op-crd');
  await ensureCrd(client, ns.name);
});
afterAll(async () => ns?.remove());

describe('ModelService CRD', () => {
  it('passes a server-side dry run and is served exactly as generated', async () => {
    expect(await kubectl('apply', '--dry-run=server', '--server-side', '--force-conflicts', '-f', CRD_FILE)).toMatch(/modelservices\.modeldock\.io .*server dry run/);
    const served = await client.get<{ spec: { versions: Array<{ schema: unknown; subresources: unknown; additionalPrinterColumns: unknown }>; names: unknown } }>(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/modelservices.modeldock.io',
    );
    const want = buildCrd() as typeof served;
    expect(served.spec.names).toMatchObject(want.spec.names as object);
    expect(served.spec.versions[0]?.schema).toEqual(want.spec.versions[0]?.schema);
    expect(served.spec.versions[0]?.subresources).toEqual(want.spec.versions[0]?.subresources);
  });

  it('kubectl explain msvc.spec shows the field descriptions', async () => {
    // kubectl's discovery cache may not list the new resource yet: that one error means "not yet".
    const out = await waitFor('explain', () => kubectl('explain', 'msvc.spec'), {
      tolerate: (e) => e instanceof Error && /doesn't have a resource type|couldn't find resource/.test(e.message),
    });
    expect(out).toContain('Desired state of a ModelService.');
    expect(out).toMatch(/image\s+<string> -required-\s+Container image of the model server\./);
    expect(out).toMatch(/readinessPath\s+<string>\s+HTTP path of the readiness probe\./);
  });

  it('the API server enforces the schema and applies its defaults', async () => {
    const k = ops(client, ns.name);
    const created = await k.create(makeModelService('defaults').obj());
    expect(created.spec).toEqual({ image: 'example.invalid/modeldock/model:1', replicas: 1, port: 8000, readinessPath: '/healthz', resources: { cpu: '100m', memory: '128Mi' }, env: [], args: [] });
    for (const bad of [
      { replicas: -1 },
      { port: 70000 },
      { image: 'no spaces allowed' },
      { resources: { cpu: 'lots', memory: '1Gi' } },
      { resources: { cpu: '1' } }, // memory is required: nothing runs for free
      { resources: {} },
    ]) {
      const res = await client
        .create<ModelService>(`/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices?fieldValidation=Strict`, {
          ...makeModelService('bad').obj(),
          spec: { ...makeModelService('bad').obj().spec, ...bad },
        })
        .then(
          () => 'accepted',
          (e: { code?: number }) => e.code,
        );
      expect(res, JSON.stringify(bad)).toBe(422);
    }
    // An unknown field: refused under strict field validation (400), pruned otherwise.
    const unknown = { ...makeModelService('unknown').obj(), spec: { ...makeModelService('unknown').obj().spec, unknownField: true } };
    const strict = await client.create(`/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices?fieldValidation=Strict`, unknown).catch((e: { code?: number }) => e.code);
    expect(strict).toBe(400);
    const pruned = await client.create<ModelService>(`/apis/modeldock.io/v1alpha1/namespaces/${ns.name}/modelservices?fieldValidation=Ignore`, unknown);
    expect(pruned.spec).not.toHaveProperty('unknownField');
  });

  it('kubectl get msvc shows the printer columns; the category and short name work', async () => {
    await ops(client, ns.name).create(makeModelService('columns').obj()); // its own: no other test's object to list
    const out = await kubectl('get', 'msvc', '-n', ns.name);
    expect(out.split('\n')[0]).toMatch(/^NAME\s+PHASE\s+READY\s+REPLICAS\s+AVAILABLE\s+AGE$/);
    expect(await kubectl('get', 'modeldock', '-n', ns.name, '-o', 'name')).toContain('modelservice.modeldock.io/columns');
    expect((await kubectl('get', 'msvc', '-n', ns.name, '-o', 'wide')).split('\n')[0]).toContain('ENDPOINT');
  });
});
