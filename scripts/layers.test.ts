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
    ['controller/ledger/quota-moves.ts', "import { admit } from '../../functions/services/admit.ts';\nvoid admit;\n", /controller\/ never imports functions\//],
    ['functions/services/admit.ts', "import { release } from '../../controller/ledger/quota-moves.ts';\nvoid release;\n", /functions\/ never imports controller\//],
    ['ledger/db.ts', "import { createApp } from '../functions/app.ts';\nvoid createApp;\n", /higher layer/],
    ['schema/admission.ts', "import { createDb } from '../ledger/db.ts';\nvoid createDb;\n", /higher layer/],
    ['controller/ledger/cluster.ts', "import { liveReader } from '../modelservice/reader.ts';\nvoid liveReader;\n", /controllers do not import each other/],
    ['controller/modelservice/setup.ts', "import { setupLedger } from '../ledger/setup.ts';\nvoid setupLedger;\n", /controllers do not import each other/],
    ['controller/runtime/manager.ts', "import { setupLedger } from '../ledger/setup.ts';\nvoid setupLedger;\n", /machinery below every controller/],
    ['mock/server.ts', "import { LABELS } from '../schema/model-service.ts';\nvoid LABELS;\n", /higher layer/],
  ])('%s: an upward import is refused', async (file, source, message) => {
    const messages = await restricted(file, source);
    expect(messages.length, `no-restricted-imports did not fire in ${file}`).toBe(1);
    expect(messages[0]).toMatch(message);
  });

  it.each([
    ['controller/ledger/quota-moves.ts', "import { FENCE } from '../../ledger/fence.ts';\nvoid FENCE;\n"],
    ['functions/db/quota.ts', "import { amountColumns } from '../../ledger/resources.ts';\nvoid amountColumns;\n"],
    ['controller/ledger/setup.ts', "import { Controller } from '../runtime/controller.ts';\nvoid Controller;\n"],
  ])('%s: a downward import is allowed', async (file, source) => {
    expect(await restricted(file, source)).toEqual([]);
  });
});
