// Upgrading from the one-namespace layout (docs/tenancy.md, "Upgrading"): a ModelService the old
// controller delivered into its own namespace keeps working under the new controller until it is
// released — reconciled there (its Deployment and Service written in the old namespace, which the
// operator labelled modeldock.io/legacy-namespace=true for the admission policies), ready, and
// released exactly once on DELETE — while a new admission of the same tenant goes to the tenant's
// own namespace.
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../controller/runtime/kube.ts';
import { modelServiceFor } from '../../controller/reservation/model-service-object.ts';
import { LABELS, MANAGED_BY, modelServiceSpecSchema, type ModelService } from '../../schema/model-service.ts';
import { FIXTURE_SPEC, insertAdmission } from '../support/ledger-rows.ts';
import { startSystem, TENANT, type System } from '../support/system.ts';

let sys: System;
let legacy: string;
beforeAll(async () => {
  sys = await startSystem();
  legacy = `${sys.namespace}-lab`;
  // The old layout's namespace, labelled by the operator as step 2 of the upgrade says (and with
  // this installation's label, so the suite's cleanup removes it).
  await sys.kube.create(paths.namespaces(), {
    metadata: {
      name: legacy,
      labels: { [LABELS.managedBy]: MANAGED_BY, 'modeldock.io/legacy-namespace': 'true', [LABELS.instance]: sys.namespace, 'pod-security.kubernetes.io/enforce': 'restricted' },
    },
  });
});
afterAll(async () => sys?.stop());

describe('upgrading from one namespace', () => {
  it('a ModelService delivered into the old namespace is reconciled there, becomes ready and is released once; a new one goes to the tenant namespace', async () => {
    // What the old controller left: the CR in its namespace, bound in the ledger, delivered.
    const id = ulid();
    const spec = modelServiceSpecSchema.parse(FIXTURE_SPEC);
    const cr = await sys.kube.create<ModelService>(paths.modelServices(legacy), modelServiceFor({ id, tenant: TENANT, requestId: `req-${id}`, createdAt: new Date() }, spec, legacy, sys.namespace));
    await insertAdmission(sys.ledger.db, { id, tenant: TENANT, state: 'delivered', binding: { namespace: legacy, uid: cr.metadata.uid! } });

    await sys.startController('ctl-upgraded');
    await sys.untilState([id], 'ready');
    expect((await sys.kube.list(paths.deployments(legacy), { labelSelector: `${LABELS.admissionId}=${id}` })).items).toHaveLength(1);
    expect((await sys.kube.list(paths.services(legacy), { labelSelector: `${LABELS.admissionId}=${id}` })).items).toHaveLength(1);

    const [fresh] = await sys.admit(1);
    await sys.untilState([fresh!], 'ready');
    expect((await sys.api(`/requests/${fresh}`)).body.binding).toMatchObject({ namespace: sys.tenantNamespace });

    for (const a of [id, fresh!]) expect((await sys.api(`/requests/${a}`, { method: 'DELETE' })).status).toBe(202);
    await sys.untilState([id, fresh!], 'released');
    expect(await sys.kube.getOrUndefined(paths.modelService(legacy, cr.metadata.name))).toBeUndefined();
    expect(await sys.ledger.count(`SELECT COUNT(*) FROM quota_movement WHERE reservation_id = ? AND direction = 'release'`, [id])).toBe(1);
    await sys.untilSettled();
  });
});
