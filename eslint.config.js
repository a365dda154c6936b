// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const up = (folder) => [`**/${folder}/**`, `${folder} is a higher layer: import downward only (docs/design.md, "Layout").`];
const TEST_FILES = ['**/*.test.ts'];
const CONTROLLER = [['**/functions/**', 'controller/ never imports functions/: the two meet only in the ledger tables (ledger/).'], up('scripts'), up('mock'), up('test')];
const PEER = 'controllers do not import each other: share through the Manager (mgr.cache) or runtime/.';
const MACHINERY = 'runtime/ is the machinery below every controller.';
/**
 * Who may not import whom; every file matches exactly one entry (a later entry for the same rule
 * would replace, not extend, an earlier one). Test files may reach test support.
 */
export const LAYERS = [
  { files: ['schema/**/*.ts'], forbid: [up('ledger'), up('functions'), up('controller'), up('scripts'), up('mock'), up('test')] },
  { files: ['ledger/**/*.ts'], forbid: [up('functions'), up('controller'), up('scripts'), up('mock'), up('test')] },
  {
    files: ['functions/**/*.ts'],
    forbid: [['**/controller/**', 'functions/ never imports controller/: the two meet only in the ledger tables (ledger/).'], up('scripts'), up('mock'), up('test')],
  },
  { files: ['controller/*.ts'], ignores: TEST_FILES, forbid: CONTROLLER },
  { files: ['controller/runtime/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', MACHINERY], ['../ledger/**', MACHINERY]] },
  { files: ['controller/modelservice/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../ledger/**', PEER]] },
  { files: ['controller/ledger/**/*.ts'], ignores: TEST_FILES, forbid: [...CONTROLLER, ['../modelservice/**', PEER]] },
  { files: ['controller/**/*.test.ts'], forbid: [CONTROLLER[0]] },
  { files: ['mock/**/*.ts'], ignores: TEST_FILES, forbid: [up('schema'), up('ledger'), up('functions'), up('controller'), up('scripts'), up('test')] },
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
  // Layers import downward only (docs/design.md, "Layout"): schema ← ledger ← {functions, controller}.
  // functions/ and controller/ meet only in the database tables, never in code.
  ...LAYERS.map(({ files, ignores = [], forbid }) => ({
    files,
    ignores,
    rules: { 'no-restricted-imports': ['error', { patterns: forbid.map(([group, message]) => ({ group: [group], message })) }] },
  })),
  // The dashboard's browser modules are JavaScript checked by tsc (checkJs, DOM lib), which
  // knows the browser globals; no-undef would not.
  { files: ['dashboard/public/**/*.js'], rules: { 'no-undef': 'off' } },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
