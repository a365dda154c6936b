// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const up = (folder) => [`**/${folder}/**`, `${folder} is a higher layer: import downward only (docs/design.md, "Layout").`];
const TEST_FILES = ['**/*.test.ts'];
/** The tenant tools and the benchmarks sit above every layer of the system: nothing below imports them. */
const TOOLS = [up('cli'), up('dashboard'), up('bench')];
/** The inference gateway is a program of its own (its process, the controller's image): only scripts/, test/ and bench/ import it. */
const GATEWAY_ABOVE = up('gateway');
const CONTROLLER = [['**/functions/**', 'controller/ never imports functions/: the two meet only in the ledger tables (ledger/).'], up('scripts'), up('mock'), up('test'), GATEWAY_ABOVE, ...TOOLS];
const PEER = 'controllers do not import each other: share through the Manager (mgr.cache) or runtime/.';
const MACHINERY = 'runtime/ is the machinery below every controller.';
const TENANT_SPACE = 'tenant/ (a tenant\'s namespace, quota and policies) is below the controllers that use it.';
const CLI = 'cli/ talks to the API over HTTP only: it imports schema/ and its own files (docs/design.md, "Layout").';
const PAGE = 'the page imports only what the dashboard bundle serves: its own files, schema/timeline.ts and schema/text.ts (scripts/gen-dashboard.ts, BROWSER_MODULES).';
/** test/support/ is the harness that test/ and bench/ share; the rest of test/ is suites. */
const HARNESS_ONLY = [['**/test/*', '!**/test/support'], 'bench/ shares the harness in test/support/, never a test suite.'];
const AUTOSCALER = 'controller/autoscale/ sits below the ledger controller, which wires it (its fence and caches come in as arguments).';
const GATEWAY = 'gateway/ imports schema/ and controller/runtime/ only (docs/design.md, "Layout").';
/** What no gateway file imports; its tests may also run the mock and use the test harness. */
const GATEWAY_FORBID = (folders) => [...folders.map((folder) => [`**/${folder}/**`, GATEWAY]), [['**/controller/**', '!**/controller/runtime', '!**/controller/runtime/**'], GATEWAY]];
const BENCH_PEER = 'a benchmark imports what it shares from bench/lib/, never another benchmark or run.ts.';
/**
 * Who may not import whom; every file matches exactly one entry (a later entry for the same rule
 * would replace, not extend, an earlier one). Test files may reach test support. A `forbid` entry is
 * [gitignore-style pattern(s) of the import, message].
 */
export const LAYERS = [
  { files: ['schema/**/*.ts'], forbid: [up('ledger'), up('functions'), up('controller'), up('scripts'), up('mock'), up('test'), GATEWAY_ABOVE, ...TOOLS] },
  { files: ['ledger/**/*.ts'], forbid: [up('functions'), up('controller'), up('scripts'), up('mock'), up('test'), GATEWAY_ABOVE, ...TOOLS] },
  {
    files: ['functions/**/*.ts'],
    forbid: [['**/controller/**', 'functions/ never imports controller/: the two meet only in the ledger tables (ledger/).'], up('scripts'), up('mock'), up('test'), GATEWAY_ABOVE, ...TOOLS],
  },
  { files: ['controller/*.ts'], ignores: TEST_FILES, forbid: CONTROLLER },
  { files: ['controller/runtime/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', MACHINERY], ['../reservation/**', MACHINERY]] },
  { files: ['controller/modelservice/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../reservation/**', PEER]] },
  { files: ['controller/reservation/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', PEER]] },
  // The tenant's space (namespace, quota, policies) sits below the ledger controller that prepares it at delivery.
  { files: ['controller/tenant/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', TENANT_SPACE], ['../reservation/**', TENANT_SPACE]] },
  // The autoscaler decides and charges through the ledger; the ledger controller wires it (its fence, its caches).
  { files: ['controller/autoscale/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', AUTOSCALER], ['../reservation/**', AUTOSCALER]] },
  // The cluster's takeover and heartbeat: wired by controller/main.ts beside the controllers, importing none of them.
  { files: ['controller/cluster/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', PEER], ['../reservation/**', PEER], ['../tenant/**', PEER], ['../autoscale/**', PEER]] },
  { files: ['controller/**/*.test.ts'], forbid: [CONTROLLER[0], GATEWAY_ABOVE] },
  { files: ['gateway/**/*.ts'], ignores: TEST_FILES, forbid: GATEWAY_FORBID(['ledger', 'functions', 'scripts', 'mock', 'test', 'cli', 'dashboard', 'bench']) },
  { files: ['gateway/**/*.test.ts'], forbid: GATEWAY_FORBID(['ledger', 'functions', 'scripts', 'cli', 'dashboard', 'bench']) },
  { files: ['mock/**/*.ts'], ignores: TEST_FILES, forbid: [up('schema'), up('ledger'), up('functions'), up('controller'), up('scripts'), up('test'), GATEWAY_ABOVE, ...TOOLS] },
  { files: ['cli/**/*.ts'], forbid: ['ledger', 'functions', 'controller', 'gateway', 'scripts', 'mock', 'test', 'dashboard', 'bench'].map((folder) => [`**/${folder}/**`, CLI]) },
  {
    files: ['dashboard/**/*.js', 'dashboard/**/*.ts'],
    forbid: [...['ledger', 'functions', 'controller', 'gateway', 'scripts', 'mock', 'test', 'cli', 'bench'].map((folder) => [`**/${folder}/**`, PAGE]), [['**/schema/**', '!**/schema/timeline.ts', '!**/schema/text.ts'], PAGE]],
  },
  { files: ['bench/run.ts'], forbid: [HARNESS_ONLY] },
  { files: ['bench/*.ts'], ignores: ['bench/run.ts'], forbid: [HARNESS_ONLY, [['./b[0-9]*', './run.ts'], BENCH_PEER]] },
  { files: ['bench/lib/**/*.ts', 'bench/stub/**/*.ts'], forbid: [HARNESS_ONLY, [['../b[0-9]*', '../run.ts'], BENCH_PEER]] },
];

export default tseslint.config(
  { ignores: ['node_modules/', '.stack/', '.wrangler/', 'dist/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // Layers import downward only (docs/design.md, "Layout"): schema ← ledger ← {functions, controller};
  // gateway/ on schema/ and controller/runtime/ alone;
  // cli/ and the page (dashboard/) on schema/ alone; bench/ on anything but the test suites.
  // functions/ and controller/ meet only in the database tables, never in code.
  ...LAYERS.map(({ files, ignores = [], forbid }) => ({
    files,
    ignores,
    rules: { 'no-restricted-imports': ['error', { patterns: forbid.map(([group, message]) => ({ group: [group].flat(), message })) }] },
  })),
  // The dashboard's browser modules are JavaScript checked by tsc (checkJs, DOM lib), which
  // knows the browser globals; no-undef would not.
  { files: ['dashboard/public/**/*.js'], rules: { 'no-undef': 'off' } },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
