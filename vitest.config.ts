import { configDefaults, defineConfig } from 'vitest/config';
import { ProjectTimesReporter } from './test/support/project-times-reporter.ts';

/** Pure logic beside the code, no I/O; also the test command of `npm run mutation` (stryker.config.json). */
export const unitProject = {
  test: {
    name: 'unit',
    include: ['{functions,controller,gateway,schema,ledger,mock,scripts,cli,dashboard,bench}/**/*.test.ts', 'test/support/**/*.test.ts'],
    environment: 'node' as const,
    sequence: { groupOrder: 0 }, // fast unit tests first
  },
};

// Six projects: `unit` (pure logic, beside the code, no I/O), `integration` (under test/,
// against the real local stack that test/global-setup.ts starts ONCE per run, the ledger on
// MariaDB), `outage` (test/e2e/outage-*.test.ts: they stop, restart and freeze the stack's
// components, so they get a stack of their own and run one at a time) and `vitess` (test/vitess/,
// and the BOTH_BACKENDS suites again with the ledger on the 2-shard Vitess keyspace; a stack of
// its own with Vitess, started by test/global-setup-vitess.ts) and `node` (test/node/: real
// containers on the stack's real node, a stack of its own started by test/global-setup-node.ts)
// and `multicluster` (test/multicluster/: three Kubernetes clusters on one etcd, a stack of its own).
const OUTAGE_SUITES = 'test/e2e/outage-*.test.ts';
/** The ledger suites that run on both backends: MariaDB (`integration`) and Vitess (`vitess`). */
export const BOTH_BACKENDS = [
  'test/integration/ledger-store.test.ts',
  'test/integration/outbox-store.test.ts',
  'test/integration/fencing-statements.test.ts',
  'test/integration/admission-services.test.ts',
  'test/integration/admission-scale.test.ts',
  'test/integration/admission-autoscale.test.ts',
  'test/integration/admission-workerd-ledger.test.ts',
  'test/integration/cluster-admin.test.ts',
  'test/integration/cluster-epoch.test.ts',
  'test/integration/cluster-failover.test.ts',
  'test/integration/failover-move.test.ts',
  'test/integration/placement.test.ts',
  'test/e2e/lifecycle.test.ts',
  'test/e2e/crash-matrix.test.ts',
  'test/e2e/fencing.test.ts',
  'test/e2e/queue.test.ts',
];
/**
 * Files and the tests in each file run in a random order, so a test that leans on another's
 * leftovers fails in CI instead of hiding. The seed is new each run (vitest prints it at the start;
 * the project-times reporter at the end); MODELDOCK_TEST_SEED (or --sequence.seed) replays an order.
 */
export function shuffleSeed(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.MODELDOCK_TEST_SEED?.trim();
  if (!raw) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new Error(`MODELDOCK_TEST_SEED must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

export default defineConfig({
  test: {
    // vitest takes the shuffle and its seed from the root config only (a project's own
    // `sequence.shuffle` is ignored), so every project's order is shuffled: `unit` and
    // `integration` above all, and the one-at-a-time `vitess` and `outage` suites too.
    sequence: { shuffle: { files: true, tests: true }, seed: shuffleSeed() },
    reporters: ['default', new ProjectTimesReporter()],
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
          include: ['test/vitess/**/*.test.ts', ...BOTH_BACKENDS],
          environment: 'node',
          env: { MODELDOCK_LEDGER_BACKEND: 'vitess' },
          globalSetup: ['test/global-setup-vitess.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // One suite at a time: the suites share the run's one Vitess ledger (each empties it).
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          // Three Kubernetes clusters on one etcd, each with its own controller (CLUSTER=c<i>): placement
          // across clusters on real apiservers (issue 33). One suite at a time, a stack of its own.
          name: 'multicluster',
          include: ['test/multicluster/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'], // its own run dir: .stack/test-multicluster
          testTimeout: 300_000,
          hookTimeout: 600_000,
          maxWorkers: 1,
          sequence: { groupOrder: 5 },
        },
      },
      {
        test: {
          // Real containers on the stack's real node (kubelet + containerd + kube-proxy in a network
          // namespace of its own; root, Linux). Never skipped: a node that cannot start fails the run.
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup-node.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          // One suite at a time: the node has 2 CPUs, and the suites size their pods to it. `npm test`
          // (scripts/test.ts) runs it beside the integration suites, never beside the outage suites
          // (side by side both slowed, and one outage suite flaked).
          maxWorkers: 1,
          sequence: { groupOrder: 4 },
        },
      },
    ],
  },
});
