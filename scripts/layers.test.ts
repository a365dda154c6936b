// The layering rule of eslint.config.js, exercised: an import against the layering fails lint.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// Only the import rule, without type information (it needs none): fast, and independent of tsconfig.
const eslint = new ESLint({
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
});

async function restricted(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  const messages = result?.messages ?? [];
  const other = messages.filter((m) => m.ruleId !== 'no-restricted-imports');
  if (other.length > 0) throw new Error(`unexpected lint output: ${JSON.stringify(other)}`);
  return messages.map((m) => m.message);
}

describe('layering (eslint no-restricted-imports)', () => {
  it.each([
    ['controller/reservation/quota-moves.ts', "import { admit } from '../../functions/services/admit.ts';\nvoid admit;\n", /controller\/ never imports functions\//],
    ['functions/services/admit.ts', "import { release } from '../../controller/reservation/quota-moves.ts';\nvoid release;\n", /functions\/ never imports controller\//],
    ['ledger/db.ts', "import { createApp } from '../functions/app.ts';\nvoid createApp;\n", /higher layer/],
    ['schema/admission.ts', "import { createDb } from '../ledger/db.ts';\nvoid createDb;\n", /higher layer/],
    ['controller/reservation/cluster.ts', "import { liveReader } from '../modelservice/reader.ts';\nvoid liveReader;\n", /controllers do not import each other/],
    ['controller/modelservice/setup.ts', "import { setupReservationController } from '../reservation/setup.ts';\nvoid setupReservationController;\n", /controllers do not import each other/],
    ['controller/runtime/manager.ts', "import { setupReservationController } from '../reservation/setup.ts';\nvoid setupReservationController;\n", /machinery below every controller/],
    ['controller/tenant/space.ts', "import { deliver } from '../reservation/deliver.ts';\nvoid deliver;\n", /below the controllers that use it/],
    ['controller/tenant/quota.ts', "import { childLabels } from '../modelservice/desired.ts';\nvoid childLabels;\n", /below the controllers that use it/],
    ['mock/server.ts', "import { LABELS } from '../schema/model-service.ts';\nvoid LABELS;\n", /higher layer/],
    ['schema/timeline.ts', "import { admissionView } from '../cli/model.ts';\nvoid admissionView;\n", /higher layer/],
    ['functions/app.ts', "import { SPEC } from '../bench/lib/model-service-spec.ts';\nvoid SPEC;\n", /higher layer/],
    ['cli/render.ts', "import { toApiError } from '../functions/errors.ts';\nvoid toApiError;\n", /cli\/ talks to the API over HTTP only/],
    ['cli/progress.ts', "import { startupStages } from '../dashboard/public/assets/app.js';\nvoid startupStages;\n", /cli\/ talks to the API over HTTP only/],
    ['dashboard/public/assets/app.js', "import { admissionSchema } from '../../../schema/api.ts';\nvoid admissionSchema;\n", /only what the dashboard bundle serves/],
    ['dashboard/public/assets/app.js', "import { toApiError } from '../../../functions/errors.ts';\nvoid toApiError;\n", /only what the dashboard bundle serves/],
    ['bench/lib/context.ts', "import { setup } from '../../test/global-setup.ts';\nvoid setup;\n", /never a test suite/],
    ['bench/b3-convergence.ts', "import { sys } from '../test/e2e/lifecycle.test.ts';\nvoid sys;\n", /never a test suite/],
    ['bench/b2-reads.ts', "import { viaWorker } from './b1-admission.ts';\nvoid viaWorker;\n", /never another benchmark or run.ts/],
    ['bench/b1-admission.ts', "import type { Benchmark } from './run.ts';\nexport type B = Benchmark;\n", /never another benchmark or run.ts/],
    ['bench/lib/api.ts', "import { b1 } from '../b1-admission.ts';\nvoid b1;\n", /never another benchmark or run.ts/],
    ['gateway/proxy.ts', "import { createDb } from '../ledger/db.ts';\nvoid createDb;\n", /gateway\/ imports schema\/ and controller\/runtime\/ only/],
    ['gateway/routes.ts', "import { childLabels } from '../controller/modelservice/desired.ts';\nvoid childLabels;\n", /gateway\/ imports schema\/ and controller\/runtime\/ only/],
    ['gateway/gateway.ts', "import { createMockServer } from '../mock/server.ts';\nvoid createMockServer;\n", /gateway\/ imports schema\/ and controller\/runtime\/ only/],
    ['gateway/gateway.test.ts', "import { createApp } from '../functions/app.ts';\nvoid createApp;\n", /gateway\/ imports schema\/ and controller\/runtime\/ only/],
    ['controller/runtime/informer.ts', "import { routesFrom } from '../../gateway/routes.ts';\nvoid routesFrom;\n", /higher layer/],
    ['schema/gateway-credential.ts', "import { routesFrom } from '../gateway/routes.ts';\nvoid routesFrom;\n", /higher layer/],
    ['functions/app.ts', "import { routesFrom } from '../gateway/routes.ts';\nvoid routesFrom;\n", /higher layer/],
  ])('%s: an upward import is refused', async (file, source, message) => {
    const messages = await restricted(file, source);
    expect(messages.length, `no-restricted-imports did not fire in ${file}`).toBe(1);
    expect(messages[0]).toMatch(message);
  });

  it.each([
    ['controller/reservation/quota-moves.ts', "import { FENCE } from '../../ledger/fence.ts';\nvoid FENCE;\n"],
    ['functions/db/quota.ts', "import { amountColumns } from '../../ledger/resources.ts';\nvoid amountColumns;\n"],
    ['controller/reservation/setup.ts', "import { Controller } from '../runtime/controller.ts';\nvoid Controller;\n"],
    ['cli/render.ts', "import { startupStages } from '../schema/timeline.ts';\nvoid startupStages;\n"],
    ['dashboard/public/assets/app.js', "import { startupStages } from '../../../schema/timeline.ts';\nvoid startupStages;\n"],
    ['bench/lib/context.ts', "import { startWorker } from '../../test/support/worker.ts';\nvoid startWorker;\n"],
    ['bench/b1-admission.ts', "import { startApi } from './lib/api.ts';\nvoid startApi;\n"],
    ['bench/run.ts', "import { b1 } from './b1-admission.ts';\nvoid b1;\n"],
    ['gateway/main.ts', "import { Informer } from '../controller/runtime/informer.ts';\nimport { LABELS } from '../schema/model-service.ts';\nvoid Informer;\nvoid LABELS;\n"],
    ['gateway/gateway.test.ts', "import { createMockServer } from '../mock/server.ts';\nimport { startMock } from '../test/support/mock-server.ts';\nvoid createMockServer;\nvoid startMock;\n"],
    ['scripts/images/build.ts', "import { routesFrom } from '../../gateway/routes.ts';\nvoid routesFrom;\n"],
  ])('%s: a downward import is allowed', async (file, source) => {
    expect(await restricted(file, source)).toEqual([]);
  });
});
