// The tenant's models as an OpenAI-style client sees them: an admission in state `ready` is a
// model. Every lookup is scoped by tenant (another tenant's id is a missing one: 404), and the
// state is read on every call: a model stops taking requests the moment its admission leaves
// `ready` (a DELETE), not when some cache expires.
import type { ModelList } from '../../schema/api.ts';
import { modelState, readyModels } from '../db/models.ts';
import { modelNotReady, notFound } from '../errors.ts';
import type { ServiceDeps } from './deps.ts';

export async function listModels(deps: ServiceDeps, tenant: string): Promise<ModelList> {
  const models = await readyModels(deps.db, tenant);
  return {
    object: 'list',
    data: models.map((m) => ({ id: m.id, object: 'model', created: Math.floor(Date.parse(m.createdAt) / 1000), owned_by: tenant, name: m.name })),
  };
}

/** Resolves when the tenant's admission `id` is ready; 404 when it is not the tenant's, 409 model_not_ready otherwise. */
export async function requireReadyModel(deps: ServiceDeps, tenant: string, id: string): Promise<void> {
  const state = await modelState(deps.db, tenant, id);
  if (state === undefined) throw notFound('model');
  if (state !== 'ready') throw modelNotReady(state);
}
