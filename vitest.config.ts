import { configDefaults, defineConfig } from 'vitest/config';

/** Pure logic beside the code, no I/O; also the test command of `npm run mutation` (stryker.config.json). */
export const unitProject = {
  test: {
    name: 'unit',
    include: ['{functions,controller,schema,ledger,mock,scripts,cli,dashboard,bench}/**/*.test.ts', 'test/support/**/*.test.ts'],
    environment: 'node' as const,
    sequence: { groupOrder: 0 }, // fast unit tests first
  },
};

// Four projects: `unit` (pure logic, beside the code, no I/O), `integration` (under test/,
// against the real local stack that test/global-setup.ts starts ONCE per run), `outage`
// (test/e2e/outage-*.test.ts: they stop, restart and freeze the stack's components, so they get
// a stack of their own and run one at a time) and `vitess` (test/vitess/: the sharded ledger on
// real vtgate, started by test/global-setup-vitess.ts).
const OUTAGE_SUITES = 'test/e2e/outage-*.test.ts';
export default defineConfig({
  test: {
    projects: [
      unitProject,
      {
        test: {
          name: 'integration',
          include: ['test/{integration,e2e}/**/*.test.ts'],
          exclude: [...configDefaults.exclude, OUTAGE_SUITES],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // Suites share one control plane on 2 cores; keep parallelism modest.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'outage',
          include: [OUTAGE_SUITES],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'], // its own run dir: .stack/test-outage
          testTimeout: 120_000,
          hookTimeout: 600_000,
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          name: 'vitess',
          include: ['test/vitess/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup-vitess.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
