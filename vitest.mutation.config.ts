// The vitest configuration Stryker runs (`npm run mutation`, stryker.config.json): the `unit`
// project of vitest.config.ts and nothing else — no stack, no integration suites.
import { defineConfig } from 'vitest/config';
import { unitProject } from './vitest.config.ts';

export default defineConfig({ test: { projects: [unitProject] } });
